#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job (README's first command). Usage: demo.sh <builddir>
set -eu
build=$1
"$build/app/test-vnic/dpdk-test-vnic" version
