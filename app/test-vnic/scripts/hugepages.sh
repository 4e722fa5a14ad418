# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Sourced by the tests that run DPDK on hugepages. The pool is only ever
# raised, by what is missing, and given back; hugetlbfs is mounted in a
# directory of the test's own and unmounted. Needs root.

huge_nr_restore="" huge_mounted="" huge_why=""

huge_meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# huge_raise PAGES: at least PAGES free hugepages of the default size, the
# pool raised by what is missing. 1 with the reason in huge_why when not.
huge_raise() {
	local need=$1 free total
	free=$(huge_meminfo HugePages_Free)
	[ "$free" -ge "$need" ] && return 0
	total=$(cat /proc/sys/vm/nr_hugepages)
	[ -n "$huge_nr_restore" ] || huge_nr_restore=$total
	echo $((total + need - free)) >/proc/sys/vm/nr_hugepages 2>/dev/null
	free=$(huge_meminfo HugePages_Free)
	if [ "$free" -lt "$need" ]; then
		huge_why="only $free of $need hugepages of $(huge_meminfo Hugepagesize) kB could be reserved"
		return 1
	fi
}

# huge_mount DIR: hugetlbfs of the default page size at DIR (created).
huge_mount() {
	mkdir -p "$1" && chmod 700 "$1"
	if ! mount -t hugetlbfs -o "pagesize=$(huge_meminfo Hugepagesize)k,mode=0700" nodev "$1"
	then
		huge_why="cannot mount hugetlbfs on $1"
		return 1
	fi
	huge_mounted=$1
}

# huge_reserve MB DIR: MB of free hugepages, mounted at DIR.
huge_reserve() {
	huge_raise $(($1 * 1024 / $(huge_meminfo Hugepagesize))) && huge_mount "$2"
}

# huge_release: unmount and give the pages back (every process using them stopped).
huge_release() {
	[ -n "$huge_mounted" ] && umount "$huge_mounted"
	[ -n "$huge_nr_restore" ] && echo "$huge_nr_restore" >/proc/sys/vm/nr_hugepages
	huge_mounted="" huge_nr_restore=""
}
