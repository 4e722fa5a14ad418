/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The software fabric: segment management (private or POSIX shared
 * memory), processes and ports, the switch (routing by DLID, multicast),
 * inbound rings, MAD delivery, dead-process clean-up and capture.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_capture.h"
#include "hfi_fabric_priv.h"

#define SHM_PATH_PREFIX		"/opa-fabric-"
#define ATTACH_WAIT_MS		2000
#define ALIVE_CACHE_NS		(5 * 1000 * 1000)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hfi_fabric *registry;

uint64_t
fab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

void
hfi_fabric_config_init(struct hfi_fabric_config *cfg, bool shm)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_ports = shm ? 16 : HFI_FABRIC_MAX_PORTS;
	cfg->data_cells = shm ? 128 : 256;
	cfg->mad_cells = 64;
	cfg->hoq_life_ms = 1000;
	cfg->npkeys = 2;
	cfg->pkeys[0] = 0x8001;
	cfg->pkeys[1] = 0x7fff;
	cfg->mgmt_npkeys = 2;
	cfg->mgmt_pkeys[0] = 0xffff;
	cfg->mgmt_pkeys[1] = 0x8001;
}

static bool
is_pow2(unsigned int v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static unsigned int
log2u(uint64_t v)
{
	return (unsigned int)__builtin_ctzll(v);
}

static int
check_config(const struct hfi_fabric_config *cfg)
{
	if (cfg->max_ports < 2 || cfg->max_ports > HFI_FABRIC_MAX_PORTS)
		return hfi_set_error(-EINVAL, "fabric max_ports %u out of range 2..%u",
				     cfg->max_ports, HFI_FABRIC_MAX_PORTS);
	if (!is_pow2(cfg->data_cells) || cfg->data_cells < 16 || cfg->data_cells > 4096)
		return hfi_set_error(-EINVAL,
				     "fabric data_cells %u: must be a power of two in 16..4096",
				     cfg->data_cells);
	if (!is_pow2(cfg->mad_cells) || cfg->mad_cells < 4 || cfg->mad_cells > 1024)
		return hfi_set_error(-EINVAL,
				     "fabric mad_cells %u: must be a power of two in 4..1024",
				     cfg->mad_cells);
	if (cfg->hoq_life_ms == 0 || cfg->hoq_life_ms > 3600000)
		return hfi_set_error(-EINVAL, "fabric hoq_life_ms %u out of range 1..3600000",
				     cfg->hoq_life_ms);
	if (cfg->npkeys == 0 || cfg->npkeys > HFI_PKEY_TABLE_SIZE)
		return hfi_set_error(-EINVAL, "fabric npkeys %u out of range 1..%u",
				     cfg->npkeys, HFI_PKEY_TABLE_SIZE);
	if (cfg->mgmt_npkeys == 0 || cfg->mgmt_npkeys > HFI_PKEY_TABLE_SIZE)
		return hfi_set_error(-EINVAL, "fabric mgmt_npkeys %u out of range 1..%u",
				     cfg->mgmt_npkeys, HFI_PKEY_TABLE_SIZE);
	return 0;
}

/* "" / NULL / "NAME" / "shm:NAME"; NAME is 1..48 characters of [A-Za-z0-9_.-]. */
static int
parse_spec(const char *spec, bool *shm, char *name)
{
	const char *n;

	if (spec == NULL)
		spec = "";
	*shm = strncmp(spec, HFI_FABRIC_SHM_PREFIX, strlen(HFI_FABRIC_SHM_PREFIX)) == 0;
	n = *shm ? spec + strlen(HFI_FABRIC_SHM_PREFIX) : spec;
	if (!hfi_name_valid(n, *shm ? 1 : 0, FAB_NAME_MAX, "_.-"))
		return hfi_set_error(-EINVAL, "fabric '%s': expected '' (default), NAME or "
				     "shm:NAME, NAME being 1..%d characters of [A-Za-z0-9_.-]",
				     spec, FAB_NAME_MAX);
	strcpy(name, n);
	return 0;
}

static size_t
hdr_bytes(void)
{
	return (sizeof(struct fab_hdr) + 4095) & ~(size_t)4095;
}

static size_t
layout_size(const struct hfi_fabric_config *cfg)
{
	return hdr_bytes() +
	       (size_t)cfg->max_ports * cfg->data_cells * (FAB_CELL_HDR + FAB_DATA_PAYLOAD) +
	       (size_t)cfg->max_ports * cfg->mad_cells * (FAB_CELL_HDR + FAB_MAD_PAYLOAD);
}

static void
fab_set_bases(struct hfi_fabric *fab)
{
	struct fab_hdr *h = fab->hdr;

	fab->data_cells = h->cfg.data_cells;
	fab->data_shift = log2u(h->cfg.data_cells);
	fab->port_units = (uint64_t)h->cfg.data_cells * FAB_PKT_UNITS_MAX;
	fab->mad_stride = FAB_CELL_HDR + FAB_MAD_PAYLOAD;
	fab->data_base = (uint8_t *)h + hdr_bytes();
	fab->unit_base = fab->data_base +
			 (size_t)h->cfg.max_ports * h->cfg.data_cells * FAB_CELL_HDR;
	fab->mad_base = fab->unit_base +
			(size_t)h->cfg.max_ports * h->cfg.data_cells * FAB_DATA_PAYLOAD;
}

/* Fill a zeroed header; `ready` is published last. */
static int
init_hdr(struct fab_hdr *h, const struct hfi_fabric_config *cfg, bool shared, const char *name)
{
	pthread_mutexattr_t attr;
	int rc;

	h->magic = FAB_MAGIC;
	h->version = FAB_VERSION;
	h->hdr_size = sizeof(struct fab_hdr);
	h->port_size = sizeof(struct fab_port);
	h->cell_hdr = FAB_CELL_HDR;
	h->cfg = *cfg;
	h->nonce = fab_now_ns() ^ ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)h;
	h->total_size = layout_size(cfg);
	if (cfg->sm_managed)
		hfi_switch_init(&h->sw, name, cfg->max_ports);
	pthread_mutexattr_init(&attr);
	if (shared)
		pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	/* A process that dies holding the lock must not block the others. */
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	rc = pthread_mutex_init(&h->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	if (rc != 0)
		return hfi_set_error(-rc, "fabric: cannot initialise its lock");
	atomic_store_explicit(&h->ready, 1, memory_order_release);
	return 0;
}

void
fab_lock(struct hfi_fabric *fab)
{
	if (pthread_mutex_lock(&fab->hdr->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&fab->hdr->lock);
}

void
fab_unlock(struct hfi_fabric *fab)
{
	pthread_mutex_unlock(&fab->hdr->lock);
}

/* ---- process liveness ---- */

static int
read_proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || p[1] == '\0')
		return -EIO;
	*state = p[2];
	/* After the command name: field 3 (state) ... field 22 (starttime). */
	p += 2;
	for (i = 3; i < 22 && p != NULL; i++) {
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL || sscanf(p, "%llu", &st) != 1)
		return -EIO;
	*start = st;
	return 0;
}

static uint64_t
self_start_time(void)
{
	char state;
	uint64_t start = 0;

	read_proc_stat(getpid(), &state, &start);
	return start;
}

static bool
pid_alive(uint32_t pid, uint64_t start)
{
	char state;
	uint64_t now_start;

	if (pid == 0)
		return false;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return false;
	if (read_proc_stat((pid_t)pid, &state, &now_start) < 0)
		return errno != ENOENT;
	/* A zombie is dead for us; a different start time means a reused pid. */
	return state != 'Z' && state != 'X' && now_start == start;
}

static bool
proc_alive(struct hfi_fabric *fab, unsigned int idx)
{
	struct fab_proc *p = &fab->hdr->procs[idx];

	if ((int)idx == fab->proc)
		return true;
	return pid_alive(atomic_load(&p->pid), p->start_time);
}

/* Whether the process that recorded `owner` in a cell still runs. */
static bool
owner_alive(struct hfi_fabric *fab, uint16_t owner)
{
	unsigned int idx = owner & (FAB_MAX_PROCS - 1);
	struct fab_proc *p = &fab->hdr->procs[idx];

	if (owner == fab->owner)
		return true;
	if (atomic_load(&p->pid) == 0 || (p->gen & 0x3ff) != (unsigned int)(owner >> 6))
		return false;
	return proc_alive(fab, idx);
}

bool
fab_port_owner_alive(struct hfi_fabric *fab, int slot)
{
	struct fab_port *port = fab_port(fab, slot);

	return atomic_load(&port->state) == PORT_ACTIVE && proc_alive(fab, port->proc);
}

static void flush_data_locked(struct hfi_fabric *fab, int slot);

static void
port_deactivate_locked(struct hfi_fabric *fab, int slot)
{
	struct fab_hdr *h = fab->hdr;
	struct fab_port *port = &h->ports[slot];
	unsigned int g;

	/* Nobody will take what waits for it: counted now, while its senders are known. */
	flush_data_locked(fab, slot);
	atomic_store(&h->lids[slot], 0);
	fab_switch_port_link_locked(fab, slot, false);
	for (g = 0; g < HFI_FABRIC_MCAST_GROUPS; g++)
		atomic_fetch_and(&h->mcast[g].members, ~(UINT64_C(1) << slot));
	port->wake[0] = '\0';
	atomic_store_explicit(&port->state, PORT_FREE, memory_order_release);
}

static int
reap_locked(struct hfi_fabric *fab)
{
	struct fab_hdr *h = fab->hdr;
	unsigned int i, s;
	int n = 0;

	for (i = 0; i < FAB_MAX_PROCS; i++) {
		struct fab_proc *p = &h->procs[i];

		if (atomic_load(&p->pid) == 0 || proc_alive(fab, i))
			continue;
		for (s = 0; s < h->cfg.max_ports; s++) {
			if (atomic_load(&h->ports[s].state) == PORT_ACTIVE &&
			    h->ports[s].proc == i) {
				port_deactivate_locked(fab, (int)s);
				n++;
			}
		}
		p->refs = 0;
		p->gen++;
		atomic_store(&p->pid, 0);
	}
	return n;
}

int
hfi_fabric_reap(struct hfi_fabric *fab)
{
	int n;

	fab_lock(fab);
	n = reap_locked(fab);
	fab_unlock(fab);
	atomic_store(&fab->last_reap_ns, fab_now_ns());
	return n;
}

void
fab_reap_periodic(struct hfi_fabric *fab, unsigned int interval_ms)
{
	uint64_t now = fab_now_ns();

	if (now - atomic_load(&fab->last_reap_ns) >= (uint64_t)interval_ms * 1000000u)
		hfi_fabric_reap(fab);
}

static int
proc_register(struct hfi_fabric *fab)
{
	struct fab_hdr *h = fab->hdr;
	unsigned int i;

	fab_lock(fab);
	reap_locked(fab);
	for (i = 0; i < FAB_MAX_PROCS; i++) {
		struct fab_proc *p = &h->procs[i];

		if (atomic_load(&p->pid) != 0)
			continue;
		p->gen++;
		p->start_time = self_start_time();
		p->refs = 1;
		atomic_store(&p->pid, (uint32_t)getpid());
		fab->proc = (int)i;
		fab->owner = (uint16_t)(i | (p->gen & 0x3ff) << 6);
		fab_unlock(fab);
		return 0;
	}
	fab_unlock(fab);
	return hfi_set_error(-ENOSPC, "fabric '%s': too many processes attached (max %d)",
			     fab->spec, FAB_MAX_PROCS);
}

/* ---- segments ---- */

static int
create_private(struct hfi_fabric *fab, const struct hfi_fabric_config *cfg)
{
	size_t size = layout_size(cfg);
	void *m;

	/* Untouched cells cost nothing: reserve, do not commit. */
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (m == MAP_FAILED)
		return hfi_set_error(-errno, "fabric '%s': cannot map %zu bytes: %s", fab->spec,
				     size, strerror(errno));
	fab->hdr = m;
	fab->size = size;
	return init_hdr(fab->hdr, cfg, false, fab->spec);
}

static void
shm_path(char *path, size_t n, const char *name)
{
	snprintf(path, n, SHM_PATH_PREFIX "%s", name);
}

static int
create_shm(struct hfi_fabric *fab, const char *name, const struct hfi_fabric_config *cfg)
{
	size_t size = layout_size(cfg);
	char path[96];
	void *m;
	int fd, rc;

	shm_path(path, sizeof(path), name);
	fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		if (rc == -EEXIST)
			return rc;
		return hfi_set_error(rc, "fabric '%s': cannot create /dev/shm%s: %s", fab->spec,
				     path, strerror(-rc));
	}
	/* Reserve every page now: a full /dev/shm fails here, not with SIGBUS later. */
	rc = posix_fallocate(fd, 0, (off_t)size);
	if (rc != 0) {
		close(fd);
		shm_unlink(path);
		return hfi_set_error(-rc, "fabric '%s': cannot reserve %zu MiB in /dev/shm: %s "
				     "(use fewer ports or cells)", fab->spec, size >> 20,
				     strerror(rc));
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rc = -errno;
	close(fd);
	if (m == MAP_FAILED) {
		shm_unlink(path);
		return hfi_set_error(rc, "fabric '%s': cannot map the segment: %s", fab->spec,
				     strerror(-rc));
	}
	fab->hdr = m;
	fab->size = size;
	rc = init_hdr(fab->hdr, cfg, true, fab->spec);
	if (rc != 0) {
		munmap(m, size);
		shm_unlink(path);
	}
	return rc;
}

static int
attach_shm(struct hfi_fabric *fab, const char *name)
{
	struct { uint64_t magic; uint32_t version, hdr_size; } id;
	char path[96];
	struct fab_hdr *h = NULL;
	struct stat st;
	unsigned int waited = 0;
	void *m;
	int fd, rc;

	shm_path(path, sizeof(path), name);
	fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return hfi_set_error(rc, "shared fabric '%s' does not exist (/dev/shm%s)",
					     fab->spec, path);
		return hfi_set_error(rc, "shared fabric '%s': cannot open /dev/shm%s: %s",
				     fab->spec, path, strerror(-rc));
	}
	/* The creator sizes the file, writes the header, then sets ready. */
	for (;;) {
		memset(&id, 0, sizeof(id));
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			goto fail;
		}
		if (pread(fd, &id, sizeof(id), 0) == (ssize_t)sizeof(id) && id.magic != 0) {
			if (id.magic != FAB_MAGIC) {
				rc = hfi_set_error(-EPROTO, "/dev/shm%s is not an OPA software "
						   "fabric segment", path);
				goto fail;
			}
			if (id.version != FAB_VERSION || id.hdr_size != sizeof(*h))
				break;	/* another layout: reported below */
		}
		if ((size_t)st.st_size >= sizeof(*h)) {
			if (h == NULL) {
				h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
				if (h == MAP_FAILED) {
					h = NULL;
					rc = -errno;
					goto fail;
				}
			}
			if (h->magic == FAB_MAGIC && atomic_load(&h->ready))
				break;
		}
		if (waited >= ATTACH_WAIT_MS) {
			rc = hfi_set_error(-EPROTO, "shared fabric '%s' was never initialised (its "
					   "creator died?): remove /dev/shm%s", fab->spec, path);
			goto fail;
		}
		sleep_ms(10);
		waited += 10;
	}
	if (h == NULL) {
		rc = hfi_set_error(-EPROTO, "shared fabric '%s' is incompatible: layout version "
				   "%u (header %u bytes), this build expects version %u (header "
				   "%zu bytes); recreate it (remove /dev/shm%s)", fab->spec,
				   id.version, id.hdr_size, FAB_VERSION, sizeof(struct fab_hdr),
				   path);
		goto fail;
	}
	if (h->version != FAB_VERSION || h->hdr_size != sizeof(struct fab_hdr) ||
	    h->port_size != sizeof(struct fab_port) || h->cell_hdr != FAB_CELL_HDR ||
	    h->cfg.max_ports > HFI_FABRIC_MAX_PORTS || h->total_size != layout_size(&h->cfg) ||
	    (uint64_t)st.st_size != h->total_size) {
		rc = hfi_set_error(-EPROTO, "shared fabric '%s' is incompatible: layout version "
				   "%u (header %u, port %u bytes, size %llu), this build expects "
				   "version %u (header %zu, port %zu bytes); recreate it "
				   "(remove /dev/shm%s)", fab->spec, h->version, h->hdr_size,
				   h->port_size, (unsigned long long)h->total_size, FAB_VERSION,
				   sizeof(struct fab_hdr), sizeof(struct fab_port), path);
		goto fail;
	}
	m = mmap(NULL, h->total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		rc = hfi_set_error(-errno, "shared fabric '%s': cannot map it: %s", fab->spec,
				   strerror(errno));
		goto fail;
	}
	fab->size = h->total_size;
	fab->hdr = m;
	munmap(h, sizeof(*h));
	close(fd);
	return 0;
fail:
	if (h != NULL)
		munmap(h, sizeof(*h));
	close(fd);
	return rc;
}

static struct hfi_fabric *
registry_find(const char *spec)
{
	struct hfi_fabric *f;

	for (f = registry; f != NULL; f = f->next)
		if (strcmp(f->spec, spec) == 0)
			return f;
	return NULL;
}

static void
registry_remove(struct hfi_fabric *fab)
{
	struct hfi_fabric **pp;

	for (pp = &registry; *pp != NULL; pp = &(*pp)->next)
		if (*pp == fab) {
			*pp = fab->next;
			return;
		}
}

static struct hfi_fabric *
fab_alloc(const char *spec, bool shm)
{
	struct hfi_fabric *fab = calloc(1, sizeof(*fab));

	if (fab == NULL)
		return NULL;
	snprintf(fab->spec, sizeof(fab->spec), "%s", spec);
	fab->shm = shm;
	fab->proc = -1;
	fab->send_sock = -1;
	pthread_mutex_init(&fab->cap_lock, NULL);
	return fab;
}

static void
fab_unmap(struct hfi_fabric *fab)
{
	if (fab->hdr != NULL)
		munmap(fab->hdr, fab->size);
	if (fab->send_sock >= 0)
		close(fab->send_sock);
	pthread_mutex_destroy(&fab->cap_lock);
	free(fab);
}

/* Map (creating if asked), then register this process. Called under registry_lock. */
static int
fab_setup(const char *spec, bool create, bool excl, const struct hfi_fabric_config *cfg,
	  struct hfi_fabric **out)
{
	struct hfi_fabric_config defaults;
	char name[FAB_NAME_MAX + 1];
	struct hfi_fabric *fab;
	bool shm;
	int rc, attempt;

	rc = parse_spec(spec, &shm, name);
	if (rc != 0)
		return rc;
	if (cfg == NULL) {
		hfi_fabric_config_init(&defaults, shm);
		cfg = &defaults;
	}
	rc = check_config(cfg);
	if (rc != 0)
		return rc;
	for (attempt = 0; attempt < 5; attempt++) {
		fab = fab_alloc(spec == NULL ? "" : spec, shm);
		if (fab == NULL)
			return hfi_set_error(-ENOMEM, "fabric: out of memory");
		if (!shm) {
			rc = create ? create_private(fab, cfg) :
				hfi_set_error(-ENOENT, "fabric '%s' does not exist", fab->spec);
		} else if (excl) {
			rc = create_shm(fab, name, cfg);
			if (rc == -EEXIST)
				hfi_set_error(rc, "shared fabric '%s' already exists", fab->spec);
		} else {
			rc = attach_shm(fab, name);
			if (rc == -ENOENT && create) {
				rc = create_shm(fab, name, cfg);
				if (rc == -EEXIST) {	/* lost a creation race: attach */
					fab_unmap(fab);
					continue;
				}
			}
		}
		if (rc != 0) {
			fab_unmap(fab);
			return rc;
		}
		fab_set_bases(fab);
		fab->send_sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		rc = fab->send_sock < 0 ? hfi_set_error(-errno, "fabric: socket: %s",
							strerror(errno)) : proc_register(fab);
		if (rc == 0 && fab->hdr->unlinked) {
			/* The last user removed its name while we opened it: start again. */
			fab_lock(fab);
			atomic_store(&fab->hdr->procs[fab->proc].pid, 0);
			fab_unlock(fab);
			fab_unmap(fab);
			continue;
		}
		if (rc != 0) {
			fab_unmap(fab);
			return rc;
		}
		fab->refs = 1;
		atomic_store(&fab->cut_through, !shm);
		atomic_store(&fab->cell_gather, true);
		atomic_store(&fab->last_reap_ns, fab_now_ns());
		fab->next = registry;
		registry = fab;
		*out = fab;
		return 0;
	}
	return hfi_set_error(-EAGAIN, "fabric '%s': it keeps being removed while opening",
			     spec);
}

int
hfi_fabric_create(const char *spec, const struct hfi_fabric_config *cfg,
		  struct hfi_fabric **out)
{
	int rc;

	pthread_mutex_lock(&registry_lock);
	if (registry_find(spec == NULL ? "" : spec) != NULL)
		rc = hfi_set_error(-EEXIST, "fabric '%s' already exists", spec == NULL ? "" : spec);
	else
		rc = fab_setup(spec, true, true, cfg, out);
	if (rc == 0)
		(*out)->hdr->persistent = 1;	/* stays until hfi_fabric_unlink() */
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

int
hfi_fabric_open(const char *spec, unsigned int flags, struct hfi_fabric **out)
{
	struct hfi_fabric *fab;
	int rc;

	pthread_mutex_lock(&registry_lock);
	fab = registry_find(spec == NULL ? "" : spec);
	if (fab != NULL) {
		fab->refs++;
		*out = fab;
		rc = 0;
	} else {
		rc = fab_setup(spec, !(flags & HFI_FABRIC_NOCREATE), false, NULL, out);
	}
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

void
hfi_fabric_close(struct hfi_fabric *fab)
{
	struct fab_hdr *h;
	unsigned int i;
	bool last = true;

	if (fab == NULL)
		return;
	pthread_mutex_lock(&registry_lock);
	if (--fab->refs > 0) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	registry_remove(fab);
	pthread_mutex_unlock(&registry_lock);

	hfi_fabric_capture_stop(fab);
	h = fab->hdr;
	fab_lock(fab);
	h->procs[fab->proc].refs = 0;
	h->procs[fab->proc].gen++;
	atomic_store(&h->procs[fab->proc].pid, 0);
	reap_locked(fab);	/* a peer that died still holds its pid */
	for (i = 0; i < FAB_MAX_PROCS; i++)
		if (atomic_load(&h->procs[i].pid) != 0)
			last = false;
	if (fab->shm && last && !h->persistent) {
		char name[FAB_NAME_MAX + 1], path[96];
		bool shm;

		/* The last user takes the name away: nothing is left behind. */
		h->unlinked = 1;
		if (parse_spec(fab->spec, &shm, name) == 0) {
			shm_path(path, sizeof(path), name);
			shm_unlink(path);
		}
	}
	fab_unlock(fab);
	fab_unmap(fab);
}

int
hfi_fabric_unlink(const char *spec)
{
	char name[FAB_NAME_MAX + 1], path[96];
	bool shm;
	int rc = parse_spec(spec, &shm, name);

	if (rc != 0)
		return rc;
	if (!shm)
		return hfi_set_error(-EINVAL, "fabric '%s' is not a shared fabric (shm:NAME)",
				     spec);
	shm_path(path, sizeof(path), name);
	if (shm_unlink(path) < 0)
		return hfi_set_error(-errno, "shared fabric '%s': cannot remove /dev/shm%s: %s",
				     spec, path, strerror(errno));
	return 0;
}

const char *
hfi_fabric_spec(const struct hfi_fabric *fab)
{
	return fab->spec;
}

void
hfi_fabric_get_config(const struct hfi_fabric *fab, struct hfi_fabric_config *cfg)
{
	*cfg = fab->hdr->cfg;
}

void
hfi_fabric_set_cut_through(struct hfi_fabric *fab, bool on)
{
	atomic_store(&fab->cut_through, on);
}

bool
hfi_fabric_cut_through(const struct hfi_fabric *fab)
{
	return atomic_load(&fab->cut_through);
}

void
hfi_fabric_set_cell_gather(struct hfi_fabric *fab, bool on)
{
	atomic_store(&fab->cell_gather, on);
}

bool
hfi_fabric_cell_gather(const struct hfi_fabric *fab)
{
	return atomic_load(&fab->cell_gather);
}

uint64_t
hfi_fabric_cell_gathered(const struct hfi_fabric *fab)
{
	return atomic_load(&fab->cell_gathered);
}

/* ---- rings ---- */

static inline uint64_t
cell_state(uint64_t lap, enum fab_cell_phase phase, uint16_t owner)
{
	return lap << 24 | (uint64_t)phase << 16 | owner;
}

static inline struct fab_cell *
cell_at(uint8_t *base, uint32_t stride, uint64_t idx)
{
	/* Cells start at multiples of their (64-byte multiple) stride. */
	return (struct fab_cell *)(void *)(base + (size_t)stride * idx);
}

/*
 * Claim the cell at the ring's enqueue position. Lap-stamped states make
 * zeroed memory a ring of free cells for lap 0.
 */
static struct fab_cell *
ring_claim(struct fab_ring *r, uint8_t *cells, uint32_t ncells, uint32_t stride,
	   uint16_t owner, uint64_t *pos_out)
{
	unsigned int shift = log2u(ncells);
	uint64_t pos = atomic_load_explicit(&r->enq, memory_order_relaxed);

	for (;;) {
		struct fab_cell *c = cell_at(cells, stride, pos & (ncells - 1));
		uint64_t lap = pos >> shift;
		uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);
		uint64_t st_lap = st >> 24;

		if (st == cell_state(lap, CELL_FREE, 0)) {
			if (atomic_compare_exchange_strong(&c->state, &st,
							   cell_state(lap, CELL_CLAIMED, owner))) {
				uint64_t expect = pos;

				atomic_compare_exchange_strong(&r->enq, &expect, pos + 1);
				*pos_out = pos;
				return c;
			}
		} else if (st_lap == lap) {
			/* Someone claimed it: help the position along. */
			uint64_t expect = pos;

			atomic_compare_exchange_strong(&r->enq, &expect, pos + 1);
		} else if (st_lap < lap) {
			return NULL;	/* still holds the previous lap: full */
		} else {
			/*
			 * Freed for a later lap: consumed, or skipped by the consumer
			 * because its claimer died before moving the position on.
			 */
			uint64_t expect = pos;

			atomic_compare_exchange_strong(&r->enq, &expect, pos + 1);
		}
		pos = atomic_load_explicit(&r->enq, memory_order_relaxed);
	}
}

static void
ring_commit(struct fab_cell *c, uint64_t pos, uint32_t ncells)
{
	atomic_store_explicit(&c->state, cell_state(pos >> log2u(ncells), CELL_FULL, 0),
			      memory_order_release);
}

/*
 * A cell claimed but not yet filled is normal for a moment; if it stays so
 * longer than this, the claiming process is checked, and skipped if dead.
 */
#define STUCK_CHECK_NS		(20 * 1000 * 1000)

static bool
claim_abandoned(struct hfi_fabric *fab, struct fab_stuck *stuck, uint64_t pos, uint16_t owner)
{
	uint64_t now = fab_now_ns();

	if (stuck->pos_plus1 != pos + 1) {
		stuck->pos_plus1 = pos + 1;
		stuck->since_ns = now;
		return false;
	}
	if (now - stuck->since_ns < STUCK_CHECK_NS)
		return false;
	stuck->since_ns = now;
	return !owner_alive(fab, owner);
}

/* Oldest full cell; cells claimed by dead processes are freed and counted. */
static struct fab_cell *
ring_peek(struct hfi_fabric *fab, struct fab_port *port, struct fab_ring *r, uint8_t *cells,
	  uint32_t ncells, uint32_t stride, struct fab_stuck *stuck, uint64_t *pos_out,
	  size_t dead_ctr)
{
	unsigned int shift = log2u(ncells);

	for (;;) {
		uint64_t pos = atomic_load_explicit(&r->deq, memory_order_relaxed);
		struct fab_cell *c = cell_at(cells, stride, pos & (ncells - 1));
		uint64_t lap = pos >> shift;
		uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);

		if (st == cell_state(lap, CELL_FULL, 0)) {
			*pos_out = pos;
			return c;
		}
		if ((st >> 24) != lap || ((st >> 16) & 0xff) != CELL_CLAIMED ||
		    !claim_abandoned(fab, stuck, pos, (uint16_t)st))
			return NULL;
		atomic_store_explicit(&c->state, cell_state(lap + 1, CELL_FREE, 0),
				      memory_order_release);
		atomic_store_explicit(&r->deq, pos + 1, memory_order_release);
		fab_count(port, dead_ctr, 1);
	}
}

static void
ring_pop(struct fab_ring *r, struct fab_cell *c, uint64_t pos, uint32_t ncells)
{
	atomic_store_explicit(&c->state, cell_state((pos >> log2u(ncells)) + 1, CELL_FREE, 0),
			      memory_order_release);
	atomic_store_explicit(&r->deq, pos + 1, memory_order_release);
}

static uint8_t *
port_data_cells(struct hfi_fabric *fab, int slot)
{
	return fab->data_base + ((size_t)slot << fab->data_shift) * FAB_CELL_HDR;
}

static uint8_t *
port_mad_cells(struct hfi_fabric *fab, int slot)
{
	return fab->mad_base + (size_t)slot * fab->hdr->cfg.mad_cells * fab->mad_stride;
}

/*
 * ---- data rings: descriptors, and packets in payload units ----
 *
 * A descriptor's state is lap:24 | end:22 | phase:2 | owner:16, end being
 * where its packet's units end (an absolute unit position, its low 22
 * bits). Positions of descriptors and units only grow. A packet's units
 * follow the previous packet's, or start the payload ring over when they
 * would run past its end, so that every packet is contiguous. Laps are
 * compared modulo 2^24: a descriptor is never more than one lap behind.
 *
 * A ring that empties starts over too: the receiver marks the next
 * descriptor CELL_RESTART with the payload ring's start as its end and
 * frees the units up to there, so a ring drained as it fills keeps writing
 * the same few lines instead of sweeping through its payload.
 */
#define DST_LAP_SHIFT		40
#define DST_LAP_BITS		24
#define DST_END_SHIFT		18
#define DST_END_MASK		((UINT64_C(1) << 22) - 1)

static inline uint64_t
dst_make(uint64_t lap, uint64_t end, enum fab_cell_phase phase, uint16_t owner)
{
	return lap << DST_LAP_SHIFT | (end & DST_END_MASK) << DST_END_SHIFT |
	       (uint64_t)phase << 16 | owner;
}

/* The lap stamped in st minus lap, modulo 2^24: 0 this lap, -1 the one before, +1 the next. */
static inline int32_t
dst_lap_diff(uint64_t st, uint64_t lap)
{
	return (int32_t)((uint32_t)((st >> DST_LAP_SHIFT) - lap) << (32 - DST_LAP_BITS)) >>
	       (32 - DST_LAP_BITS);
}

static inline enum fab_cell_phase
dst_phase(uint64_t st)
{
	return (enum fab_cell_phase)((st >> 16) & 3);
}

/* The absolute unit position whose low bits st records, from one at most 2^22 before it. */
static inline uint64_t
dst_end(uint64_t st, uint64_t from)
{
	return from + (((st >> DST_END_SHIFT) - from) & DST_END_MASK);
}

static inline uint32_t
pkt_units(uint32_t len)
{
	return (len + FAB_UNIT - 1) / FAB_UNIT;
}

static inline uint8_t *
unit_at(struct hfi_fabric *fab, int slot, uint64_t upos)
{
	uint64_t n = fab->port_units;

	return fab->unit_base + ((uint64_t)slot * n + (upos & (n - 1))) * FAB_UNIT;
}

/*
 * Where the packet claimed at descriptor position pos - 1 ends, read from
 * its descriptor (false: that descriptor has moved on, so enq was read
 * stale). udeq, read before, is at most that end unless pos itself was
 * claimed and consumed meanwhile, which the caller's compare-and-swap (or
 * its second look at pos) finds.
 */
static inline bool
prev_end(uint8_t *cells, uint32_t ncells, unsigned int shift, uint64_t pos, uint64_t udeq,
	 uint64_t *end)
{
	struct fab_cell *p;
	uint64_t st;
	int32_t d;

	if (pos == 0) {
		*end = 0;
		return true;
	}
	p = cell_at(cells, FAB_CELL_HDR, (pos - 1) & (ncells - 1));
	st = atomic_load_explicit(&p->state, memory_order_acquire);
	d = dst_lap_diff(st, (pos - 1) >> shift);
	/* Claimed or full in its lap, or freed for the next: either way its end is there. */
	switch (dst_phase(st)) {
	case CELL_FREE:
		if (d != 1)
			return false;
		break;
	case CELL_CLAIMED:
	case CELL_FULL:
		if (d != 0)
			return false;
		break;
	default:
		return false;
	}
	*end = dst_end(st, udeq);
	return true;
}

struct fab_cell *
fab_data_claim(struct hfi_fabric *fab, int slot, uint32_t len, uint64_t *pos_out,
	       uint8_t **data)
{
	struct fab_ring *r = &fab_port(fab, slot)->data;
	uint8_t *cells = port_data_cells(fab, slot);
	uint32_t ncells = fab->data_cells;
	unsigned int shift = fab->data_shift;
	uint64_t nunits = fab->port_units;
	uint64_t n = pkt_units(len);

	for (;;) {
		uint64_t pos = atomic_load_explicit(&r->enq, memory_order_acquire);
		struct fab_cell *c = cell_at(cells, FAB_CELL_HDR, pos & (ncells - 1));
		uint64_t lap = pos >> shift;
		uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);
		int32_t d = dst_lap_diff(st, lap);
		uint64_t udeq, start, expect = pos;

		if (d == 0 && (dst_phase(st) == CELL_FREE || dst_phase(st) == CELL_RESTART)) {
			udeq = atomic_load_explicit(&r->udeq, memory_order_acquire);
			if (dst_phase(st) == CELL_RESTART)
				start = dst_end(st, udeq);
			else if (!prev_end(cells, ncells, shift, pos, udeq, &start))
				continue;
			if ((start & (nunits - 1)) + n > nunits)
				start = (start | (nunits - 1)) + 1;	/* from the ring's start */
			if (start + n - udeq > nunits) {
				/*
				 * Full, unless pos was taken meanwhile: then udeq may
				 * have passed the end just read, and that proves nothing.
				 */
				if (atomic_load_explicit(&c->state, memory_order_acquire) != st)
					continue;
				return NULL;
			}
			if (!atomic_compare_exchange_strong(&c->state, &st,
							    dst_make(lap, start + n, CELL_CLAIMED,
								     fab->owner)))
				continue;
			atomic_compare_exchange_strong(&r->enq, &expect, pos + 1);
			*pos_out = pos;
			*data = unit_at(fab, slot, start);
			return c;
		}
		if (d < 0)
			return NULL;	/* still holds the previous lap: full */
		/*
		 * Claimed this lap, or freed for the next (consumed, or skipped
		 * because its claimer died before moving the position on): help
		 * the position along.
		 */
		atomic_compare_exchange_strong(&r->enq, &expect, pos + 1);
	}
}

void
fab_data_commit(struct fab_cell *c)
{
	uint64_t st = atomic_load_explicit(&c->state, memory_order_relaxed);

	atomic_store_explicit(&c->state, (st & ~(UINT64_C(3) << 16 | 0xffff)) |
					 (uint64_t)CELL_FULL << 16,
			      memory_order_release);
}

/*
 * Free descriptor pos and the units up to end. If that empties the ring,
 * far enough into the payload ring that any packet fits before its end,
 * the next packet is told to start over (CELL_RESTART) and the units up
 * to there are freed; a producer that claims the next descriptor first
 * makes the mark fail, and one that read it before the mark fails its own
 * claim and reads again.
 */
static void
data_free(struct hfi_fabric *fab, struct fab_ring *r, uint8_t *cells, struct fab_cell *c,
	  uint64_t pos, uint64_t end)
{
	unsigned int shift = fab->data_shift;
	uint64_t next = pos + 1, st, restart;
	struct fab_cell *nc;

	atomic_store_explicit(&c->state, dst_make((pos >> shift) + 1, end, CELL_FREE, 0),
			      memory_order_release);
	atomic_store_explicit(&r->udeq, end, memory_order_release);
	atomic_store_explicit(&r->deq, next, memory_order_release);
	if ((end & (fab->port_units - 1)) < FAB_PKT_UNITS_MAX ||
	    atomic_load_explicit(&r->enq, memory_order_acquire) != next)
		return;
	nc = cell_at(cells, FAB_CELL_HDR, next & (fab->data_cells - 1));
	st = atomic_load_explicit(&nc->state, memory_order_acquire);
	if (dst_phase(st) != CELL_FREE || dst_lap_diff(st, next >> shift) != 0)
		return;
	restart = (end | (fab->port_units - 1)) + 1;
	if (atomic_compare_exchange_strong(&nc->state, &st,
					   dst_make(next >> shift, restart, CELL_RESTART, 0)))
		atomic_store_explicit(&r->udeq, restart, memory_order_release);
}

/*
 * The oldest full descriptor and its bytes; claims of dead processes are
 * freed and counted, as are descriptors whose length does not fit the
 * units they claimed (only a broken writer leaves one).
 */
struct fab_cell *
fab_data_peek(struct hfi_fabric *fab, int slot, uint64_t *pos_out, uint8_t **data)
{
	struct fab_port *port = fab_port(fab, slot);
	struct fab_ring *r = &port->data;
	uint8_t *cells = port_data_cells(fab, slot);
	uint32_t ncells = fab->data_cells;
	unsigned int shift = fab->data_shift;

	for (;;) {
		uint64_t pos = atomic_load_explicit(&r->deq, memory_order_relaxed);
		uint64_t udeq = atomic_load_explicit(&r->udeq, memory_order_relaxed);
		struct fab_cell *c = cell_at(cells, FAB_CELL_HDR, pos & (ncells - 1));
		uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);
		uint64_t end;

		if (dst_lap_diff(st, pos >> shift) != 0 || dst_phase(st) == CELL_FREE ||
		    dst_phase(st) == CELL_RESTART)
			return NULL;
		end = dst_end(st, udeq);
		if (dst_phase(st) == CELL_FULL) {
			uint64_t n = pkt_units(c->len);

			if (c->len <= FAB_DATA_PAYLOAD && n <= end - udeq &&
			    end - udeq <= fab->port_units) {
				*pos_out = pos;
				*data = unit_at(fab, slot, end - n);
				return c;
			}
		} else if (!claim_abandoned(fab, &fab->stuck[slot][0], pos, (uint16_t)st)) {
			return NULL;
		}
		data_free(fab, r, cells, c, pos, end);
		fab_count(port, FAB_CTR_DROP(HFI_DROP_DEAD_SENDER), 1);
	}
}

void
fab_data_pop(struct hfi_fabric *fab, int slot, struct fab_cell *c, uint64_t pos)
{
	struct fab_ring *r = &fab_port(fab, slot)->data;
	uint64_t st = atomic_load_explicit(&c->state, memory_order_relaxed);

	data_free(fab, r, port_data_cells(fab, slot), c, pos,
		  dst_end(st, atomic_load_explicit(&r->udeq, memory_order_relaxed)));
}

/*
 * Discard the packets waiting in the data ring of the port in slot, whose
 * owner closed it or died: each is counted at its sender (receiver_gone),
 * the one port still there to count it.
 */
static void
flush_data_locked(struct hfi_fabric *fab, int slot)
{
	struct fab_cell *c;
	uint8_t *data;
	uint64_t pos;

	while ((c = fab_data_peek(fab, slot, &pos, &data)) != NULL) {
		int from = fab_slot_of_lid(fab, c->src_lid);

		if (from >= 0 && from != slot)
			fab_count_drop_pkt(fab_port(fab, from)->ctr, HFI_DROP_RECEIVER_GONE,
					   c->flags);
		fab_data_pop(fab, slot, c, pos);
	}
}

/*
 * Discard what a previous owner of the slot left in its rings (a sender
 * may have committed a packet after the slot was deactivated).
 */
static void
flush_stale_locked(struct hfi_fabric *fab, int slot)
{
	struct fab_port *port = fab_port(fab, slot);
	struct fab_cell *c;
	uint64_t pos;

	flush_data_locked(fab, slot);
	while ((c = ring_peek(fab, port, &port->mad, port_mad_cells(fab, slot),
			      fab->hdr->cfg.mad_cells, fab->mad_stride, &fab->stuck[slot][1], &pos,
			      FAB_CTR(mad_drops))) != NULL)
		ring_pop(&port->mad, c, pos, fab->hdr->cfg.mad_cells);
}

/* ---- ports ---- */

int
fab_slot_of_lid(struct hfi_fabric *fab, uint32_t lid)
{
	unsigned int i;

	if (lid == 0)
		return -1;
	for (i = 0; i < fab->hdr->cfg.max_ports; i++)
		if (atomic_load_explicit(&fab->hdr->lids[i], memory_order_acquire) == lid)
			return (int)i;
	return -1;
}

static int
open_wake_socket(const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	memcpy(addr.sun_path + 1, name, len);	/* abstract namespace: leading NUL */
	if (bind(fd, (struct sockaddr *)&addr,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

int
fab_port_attach(struct hfi_fabric *fab, const char *name, enum hfi_role role, uint32_t lid,
		int *slot_out, int *wake_fd)
{
	struct fab_hdr *h = fab->hdr;
	struct fab_port *port;
	int slot = -1, fd, rc;
	unsigned int i;

	if (lid != 0 && (lid > HFI_LID_UCAST_MAX))
		return hfi_set_error(-EINVAL, "LID 0x%x is not a unicast LID (1..0x%x)", lid,
				     HFI_LID_UCAST_MAX);
	fab_lock(fab);
	reap_locked(fab);
	if (lid != 0) {
		int other = fab_slot_of_lid(fab, lid);

		if (other >= 0) {
			rc = hfi_set_error(-EADDRINUSE, "LID 0x%x is already used by port '%s' "
					   "(pid %u) on fabric '%s'", lid, h->ports[other].name,
					   atomic_load(&h->procs[h->ports[other].proc].pid),
					   fab->spec);
			goto out;
		}
	} else {
		for (lid = 1; lid <= HFI_LID_UCAST_MAX && fab_slot_of_lid(fab, lid) >= 0; lid++)
			;
	}
	for (i = 0; i < h->cfg.max_ports; i++)
		if (atomic_load(&h->ports[i].state) == PORT_FREE) {
			slot = (int)i;
			break;
		}
	if (slot < 0) {
		rc = hfi_set_error(-ENOSPC, "fabric '%s' is full (%u ports)", fab->spec,
				   h->cfg.max_ports);
		goto out;
	}
	port = &h->ports[slot];
	snprintf(port->wake, sizeof(port->wake), "opa-fabric/%016llx/%d/%llu",
		 (unsigned long long)h->nonce, slot, (unsigned long long)port->epoch + 1);
	fd = open_wake_socket(port->wake);
	if (fd < 0) {
		port->wake[0] = '\0';
		rc = hfi_set_error(fd, "fabric '%s': cannot bind the event socket: %s",
				   fab->spec, strerror(-fd));
		goto out;
	}
	flush_stale_locked(fab, slot);
	port->epoch++;
	port->proc = (uint32_t)fab->proc;
	port->lid = lid;
	port->role = role;
	port->guid = FAB_GUID_BASE | lid;
	port->lid_by_driver = 0;
	snprintf(port->name, sizeof(port->name), "%s", name);
	if (h->cfg.sm_managed) {
		/*
		 * The table hfi1 powers a port on with (hfi1_init_pportdata):
		 * the default partition and limited management; the SM writes
		 * the rest. The configured tables are what a fabric without an
		 * SM gives instead: hosts are limited members of management,
		 * the EM's ports full ones.
		 */
		memset(port->pkeys, 0, sizeof(port->pkeys));
		port->pkeys[0] = 0x8001;
		port->pkeys[1] = 0x7fff;
		port->npkeys = 2;
	} else {
		port->npkeys = role == HFI_ROLE_MGMT ? h->cfg.mgmt_npkeys : h->cfg.npkeys;
		memcpy(port->pkeys, role == HFI_ROLE_MGMT ? h->cfg.mgmt_pkeys : h->cfg.pkeys,
		       sizeof(port->pkeys));
	}
	for (i = 0; i < FAB_NCOUNTERS; i++)
		atomic_store(&port->ctr[i], 0);
	atomic_store(&port->drain_lock, 0);
	/* Down until the port's 8051 trains the link (the bring-up asks it to). */
	atomic_store(&port->hw, 0);
	atomic_store(&port->lstate, HFI_LSTATE_DOWN);
	atomic_store(&port->link, HFI_LINK_UP);
	atomic_fetch_add(&port->link_gen, 1);
	h->procs[fab->proc].refs++;
	atomic_store_explicit(&port->state, PORT_ACTIVE, memory_order_release);
	atomic_store_explicit(&h->lids[slot], lid, memory_order_release);
	fab_switch_port_link_locked(fab, slot, true);
	*slot_out = slot;
	*wake_fd = fd;
	rc = 0;
out:
	fab_unlock(fab);
	return rc;
}

/* The highest free LID a 9B header can carry, for a port that had to give its LID up. */
static uint32_t
spare_lid_locked(struct hfi_fabric *fab)
{
	uint32_t lid;

	for (lid = HFI_9B_MCAST_BASE - 1; lid > 0 && fab_slot_of_lid(fab, lid) >= 0; lid--)
		;
	return lid;
}

int
fab_port_set_lid(struct hfi_fabric *fab, int slot, uint32_t lid)
{
	struct fab_port *port = fab_port(fab, slot), *o;
	int other, rc = 0;

	if (lid == 0 || lid > HFI_LID_UCAST_MAX)
		return hfi_set_error(-EINVAL, "LID 0x%x is not a unicast LID (1..0x%x)", lid,
				     HFI_LID_UCAST_MAX);
	fab_lock(fab);
	other = fab_slot_of_lid(fab, lid);
	o = other >= 0 ? fab_port(fab, other) : NULL;
	if (o != NULL && other != slot && o->lid_by_driver) {
		rc = hfi_set_error(-EADDRINUSE, "LID 0x%x is already used by port '%s' on fabric "
				   "'%s'", lid, o->name, fab->spec);
		goto out;
	}
	if (o != NULL && other != slot) {
		/*
		 * The subnet manager hands out LIDs the fabric gave other ports
		 * when they attached: such a port moves to a spare LID until its
		 * own driver is given one (LIDs stay unique on the fabric).
		 */
		o->lid = spare_lid_locked(fab);
		atomic_store_explicit(&fab->hdr->lids[other], o->lid, memory_order_release);
	}
	port->lid = lid;
	port->lid_by_driver = 1;
	atomic_store_explicit(&fab->hdr->lids[slot], lid, memory_order_release);
out:
	fab_unlock(fab);
	return rc;
}

void
fab_port_detach(struct hfi_fabric *fab, int slot, int wake_fd)
{
	fab_lock(fab);
	port_deactivate_locked(fab, slot);
	fab->hdr->procs[fab->proc].refs--;
	fab_unlock(fab);
	close(wake_fd);
}

/* Ports that take data packets: active, and not management-only (no receive path). */
static uint64_t
data_ports_mask(struct hfi_fabric *fab)
{
	uint64_t m = 0;
	unsigned int i;

	for (i = 0; i < fab->hdr->cfg.max_ports; i++)
		if (atomic_load_explicit(&fab->hdr->lids[i], memory_order_acquire) != 0 &&
		    fab_port(fab, (int)i)->role != HFI_ROLE_MGMT)
			m |= UINT64_C(1) << i;
	return m;
}

uint64_t
fab_route(struct hfi_fabric *fab, int src_slot, uint32_t dlid)
{
	enum hfi_drop_reason why;
	unsigned int g;
	int slot;

	if (fab_switch_programmed(fab))
		return fab_switch_route(fab, src_slot, dlid, false, &why);

	if (hfi_lid_is_mcast(dlid)) {
		uint64_t members = data_ports_mask(fab) & ~(UINT64_C(1) << src_slot);

		for (g = 0; g < HFI_FABRIC_MCAST_GROUPS; g++)
			if (atomic_load(&fab->hdr->mcast[g].mlid) == dlid)
				return members & atomic_load(&fab->hdr->mcast[g].members);
		return members;
	}
	slot = fab_slot_of_lid(fab, dlid);
	return slot < 0 ? 0 : UINT64_C(1) << slot;
}

uint64_t
fab_route_9b(struct hfi_fabric *fab, int src_slot, uint16_t dlid)
{
	int slot;

	if (dlid == HFI_9B_LID_PERMISSIVE)
		/* Under a subnet manager the switch takes it (directed routes). */
		return fab_has_switch(fab) ? 0 : data_ports_mask(fab) & ~(UINT64_C(1) << src_slot);
	if (dlid >= HFI_9B_MCAST_BASE)
		return 0;
	slot = fab_slot_of_lid(fab, dlid);
	return slot < 0 ? 0 : UINT64_C(1) << slot;
}

static void
push_data(struct hfi_fabric *fab, struct fab_src src, const uint32_t *icrc, uint64_t *targets,
	  const uint8_t *pkt, uint32_t len, unsigned int flags)
{
	uint64_t t = *targets;

	while (t != 0) {
		int i = __builtin_ctzll(t);
		uint64_t bit = UINT64_C(1) << i;
		struct fab_port *dst = fab_port(fab, i);
		struct fab_cell *c;
		uint8_t *data;
		uint64_t pos;

		t &= ~bit;
		if (atomic_load_explicit(&fab->hdr->lids[i], memory_order_acquire) == 0) {
			fab_count_drop_pkt(src.ctr, HFI_DROP_UNKNOWN_DLID, flags);
		} else if (atomic_load_explicit(&dst->link, memory_order_relaxed) != HFI_LINK_UP) {
			fab_count_drop_pkt(dst->ctr, HFI_DROP_DEST_LINK_DOWN, flags);
		} else if (dst->role == HFI_ROLE_MGMT) {
			/* Nothing drains a management port's data ring: refuse at the door. */
			fab_count_drop_pkt(dst->ctr, HFI_DROP_PORT_DISABLED, flags);
		} else {
			c = fab_data_claim(fab, i, len, &pos, &data);
			if (c == NULL)
				continue;	/* full: stays in *targets */
			c->len = len;
			c->src_lid = src.lid;
			c->flags = (uint8_t)(flags & ~(FAB_PKT_INJECTED | FAB_PKT_ICRC));
			if (icrc != NULL) {
				c->icrc = *icrc;
				c->flags |= FAB_PKT_ICRC;
			}
			memcpy(data, pkt, len);
			fab_data_commit(c);
		}
		if (flags & FAB_PKT_INJECTED) {
			fab_count_ctr(src.ctr, FAB_CTR(rx_injected), 1);
		} else if (src.acc != NULL) {
			src.acc->pkts++;
			src.acc->bytes += len;
		} else {
			fab_count_ctr(src.ctr, FAB_CTR(tx_pkts), 1);
			fab_count_ctr(src.ctr, FAB_CTR(tx_bytes), len);
		}
		*targets &= ~bit;
	}
}

void
fab_push_data_from(struct hfi_fabric *fab, struct fab_src src, uint64_t *targets,
		   const uint8_t *pkt, uint32_t len, unsigned int flags)
{
	push_data(fab, src, NULL, targets, pkt, len, flags);
}

void
fab_push_data(struct hfi_fabric *fab, int src_slot, uint64_t *targets, const uint8_t *pkt,
	      uint32_t len, unsigned int flags)
{
	push_data(fab, fab_src_port(fab, src_slot), NULL, targets, pkt, len, flags);
}

void
fab_push_data_acc(struct hfi_fabric *fab, int src_slot, struct fab_tx_acc *acc,
		  const uint32_t *icrc, uint64_t *targets, const uint8_t *pkt, uint32_t len,
		  unsigned int flags)
{
	struct fab_src src = fab_src_port(fab, src_slot);

	src.acc = acc;
	push_data(fab, src, icrc, targets, pkt, len, flags);
}

struct fab_cell *
fab_push_cell_claim(struct hfi_fabric *fab, int src_slot, int slot, uint32_t len, uint8_t **data)
{
	uint64_t pos;
	struct fab_cell *c = fab_data_claim(fab, slot, len, &pos, data);

	if (c == NULL)
		return NULL;
	c->len = len;
	c->src_lid = fab_port(fab, src_slot)->lid;
	c->flags = 0;	/* 16B, not injected: what push_data() keeps of the flags */
	return c;
}

void
fab_push_cell_commit(struct fab_tx_acc *acc, struct fab_cell *c, uint32_t len,
		     const uint32_t *icrc)
{
	if (icrc != NULL) {
		c->icrc = *icrc;
		c->flags |= FAB_PKT_ICRC;
	}
	fab_data_commit(c);
	acc->pkts++;
	acc->bytes += len;
}

/* ---- logical link states ---- */

/*
 * Whether only the fabric will activate this port: it has no subnet
 * manager (it plays the fixed configuration instead), or the port is a
 * management port, a fabric service (the EM, a subnet manager) whose port
 * has no driver to do it.
 */
static bool
activates_itself(struct hfi_fabric *fab, const struct fab_port *p)
{
	return !fab->hdr->cfg.sm_managed || p->role == HFI_ROLE_MGMT;
}

/* Where a port's logical state goes when its link comes (back) up. */
static uint32_t
lstate_at_link_up(struct hfi_fabric *fab, struct fab_port *p)
{
	uint32_t hw = atomic_load(&p->hw);

	if (!(hw & FAB_HW_TRAINED))
		return HFI_LSTATE_DOWN;	/* its 8051 has not trained the link yet */
	return (hw & FAB_HW_RCV_PORT) && activates_itself(fab, p) ? HFI_LSTATE_ACTIVE :
	       HFI_LSTATE_INIT;
}

static bool
lstate_move(struct fab_port *p, uint32_t from, uint32_t to)
{
	return atomic_compare_exchange_strong(&p->lstate, &from, to);
}

void
fab_port_trained(struct hfi_fabric *fab, int slot, bool up)
{
	struct fab_port *p = fab_port(fab, slot);

	if (up) {
		/* LinkUp: Init, which the driver waits for (hfi1's handle_link_up). */
		atomic_fetch_or(&p->hw, FAB_HW_TRAINED);
		atomic_store(&p->lstate, HFI_LSTATE_INIT);
	} else {
		atomic_fetch_and(&p->hw, ~FAB_HW_TRAINED);
		atomic_store(&p->lstate, HFI_LSTATE_DOWN);
	}
}

void
fab_port_rcv_enable(struct hfi_fabric *fab, int slot, bool on)
{
	struct fab_port *p = fab_port(fab, slot);

	if (!on) {
		atomic_fetch_and(&p->hw, ~FAB_HW_RCV_PORT);
		return;
	}
	if (atomic_fetch_or(&p->hw, FAB_HW_RCV_PORT) & FAB_HW_RCV_PORT)
		return;
	/*
	 * The port now receives, so a subnet manager could reach its SMA and
	 * configure it; the fixed configuration is in place at once (Init
	 * straight to Active: there is no SM sweep to wait for in Armed).
	 */
	if (activates_itself(fab, p) && atomic_load(&p->link) == HFI_LINK_UP)
		lstate_move(p, HFI_LSTATE_INIT, HFI_LSTATE_ACTIVE);
}

void
fab_lstate_write(struct hfi_fabric *fab, int slot, uint32_t lstate)
{
	struct fab_port *p = fab_port(fab, slot);

	/* hfi1's set_link_state moves by this CSR; the chip's answer to others is unknown. */
	if (lstate == HFI_LSTATE_ARMED)
		lstate_move(p, HFI_LSTATE_INIT, HFI_LSTATE_ARMED);
	else if (lstate == HFI_LSTATE_ACTIVE)
		lstate_move(p, HFI_LSTATE_ARMED, HFI_LSTATE_ACTIVE);
}

void
fab_port_set_mad_rx(struct hfi_fabric *fab, int slot, uint32_t bits)
{
	struct fab_port *p = fab_port(fab, slot);
	uint32_t old = atomic_load(&p->hw), want;

	do {
		want = (old & ~(FAB_HW_MAD_QP0 | FAB_HW_MAD_QP1)) | bits;
	} while (old != want && !atomic_compare_exchange_weak(&p->hw, &old, want));
}

/* fab_may_receive() past its inline test. */
bool
fab_may_receive_slow(struct hfi_fabric *fab, int slot, bool vl15)
{
	struct fab_port *p = fab_port(fab, slot);
	uint32_t s = atomic_load_explicit(&p->lstate, memory_order_relaxed);

	if (vl15)
		return s >= HFI_LSTATE_INIT;
	if (s == HFI_LSTATE_ARMED) {
		/* A data packet at an Armed port: the chip goes Active (IB/OPA port states). */
		if (lstate_move(p, HFI_LSTATE_ARMED, HFI_LSTATE_ACTIVE))
			fab_wake(fab, slot);
		return true;
	}
	return s == HFI_LSTATE_ACTIVE;
}

/* ---- MADs ---- */

static int
pkey_index_of(const struct fab_port *p, uint16_t pkey)
{
	unsigned int i;

	for (i = 0; i < p->npkeys; i++)
		if (hfi_pkey_match(p->pkeys[i], pkey))
			return (int)i;
	return -1;
}

/* Whether the port takes MADs to this QP into a receive context, as a chip (FAB_HW_MAD_*). */
bool
fab_takes_mad(const struct fab_port *p, uint32_t qpn)
{
	uint32_t hw = atomic_load_explicit(&p->hw, memory_order_acquire);

	if (p->role != HFI_ROLE_HOST)
		return false;
	return (hw & (qpn == HFI_QP0 ? FAB_HW_MAD_QP0 : FAB_HW_MAD_QP1)) != 0;
}

/*
 * A MAD into the MAD ring of the port in slot, for hfi_mad_recv(). As the
 * receiving HCA, it is dropped (mad_drops) when the link is down, the
 * logical state does not let it in, its P_Key is not in the port's table,
 * or it is a GSI datagram with another Q_Key.
 */
void
fab_mad_to_ring(struct hfi_fabric *fab, int slot, const struct hfi_capture_mad *a,
		const void *mad, size_t len)
{
	struct fab_port *dst = fab_port(fab, slot);
	struct fab_cell *c;
	uint64_t pos;

	if (atomic_load(&dst->link) != HFI_LINK_UP ||
	    !fab_may_receive(fab, slot, dst, a->dest_qpn == HFI_QP0) ||
	    (a->dest_qpn == HFI_QP1 && a->qkey != HFI_GSI_QKEY)) {
		fab_count(dst, FAB_CTR(mad_drops), 1);
		return;
	}
	if (pkey_index_of(dst, a->pkey) < 0) {
		fab_count(dst, FAB_CTR(mad_drops), 1);
		fab_count(dst, FAB_CTR(mad_pkey_drops), 1);
		return;
	}
	c = ring_claim(&dst->mad, port_mad_cells(fab, slot), fab->hdr->cfg.mad_cells,
		       fab->mad_stride, fab->owner, &pos);
	if (c == NULL) {
		fab_count(dst, FAB_CTR(mad_drops), 1);
		return;
	}
	c->len = (uint32_t)len;
	c->src_lid = a->slid;
	c->src_qpn = a->src_qpn;
	c->dest_qpn = a->dest_qpn;
	c->qkey = a->qkey;
	c->pkey = a->pkey;
	c->sl = a->sl;
	memcpy(c->data, mad, len);
	ring_commit(c, pos, fab->hdr->cfg.mad_cells);
	fab_wake(fab, slot);
}

/*
 * A MAD into the data ring of the port in slot, as the 9B UD packet that
 * carries it on the wire (hfi_capture_mad_ud()): the port's receive
 * checks and context choice (VL15, QP map) then apply as to any packet.
 * It counts as a packet sent (tx_pkts) besides the MAD (tx_mads). A full
 * ring does not hold a datagram: it is dropped (mad_drops).
 */
bool
fab_mad_to_data(struct hfi_fabric *fab, struct fab_src src, int slot,
		const struct hfi_capture_mad *a, const void *mad, size_t len)
{
	uint8_t pkt[HFI_9B_UD_HDR_LEN + HFI_MAD_SIZE + 3 + HFI_9B_ICRC_LEN];
	uint64_t target = UINT64_C(1) << slot;
	struct hfi_9b_ud u;
	size_t n;

	hfi_capture_mad_ud(a, &u);
	n = hfi_9b_ud_packet(pkt, &u, mad, len);
	fab_push_data_from(fab, src, &target, pkt, (uint32_t)n,
			   FAB_PKT_9B | (a->dest_qpn != HFI_QP0 && (a->sl & 0x10) ? FAB_PKT_SC4 : 0));
	if (target != 0) {
		fab_count(fab_port(fab, slot), FAB_CTR(mad_drops), 1);
		return false;
	}
	fab_wake(fab, slot);
	return true;
}

void
fab_capture_mad(struct hfi_fabric *fab, const struct hfi_capture_mad *a, const void *mad,
		size_t len)
{
	if (!atomic_load_explicit(&fab->capturing, memory_order_relaxed))
		return;
	pthread_mutex_lock(&fab->cap_lock);
	if (fab->cap != NULL)
		hfi_capture_mad(fab->cap, a, mad, (uint32_t)len);
	pthread_mutex_unlock(&fab->cap_lock);
}

/*
 * Where a GSI (QP1) MAD to lid goes: the port with that LID, or under the
 * switch's tables where its LFT says (a GSI datagram is data: the switch
 * ports' states gate it). -1 when nowhere.
 */
static int
gsi_slot(struct hfi_fabric *fab, int src_slot, uint32_t lid)
{
	enum hfi_drop_reason why;
	uint64_t t;

	if (!fab_switch_programmed(fab))
		return fab_slot_of_lid(fab, lid);
	t = hfi_lid_is_mcast(lid) ? 0 : fab_switch_route(fab, src_slot, lid, false, &why);
	return t == 0 ? -1 : __builtin_ctzll(t);
}

int
fab_push_mad(struct hfi_fabric *fab, int src_slot, const struct hfi_mad_addr *to,
	     const void *mad, size_t len)
{
	struct fab_port *src = fab_port(fab, src_slot);
	struct hfi_capture_mad a;
	bool smp = to->qpn == HFI_QP0;
	int slot;

	if (atomic_load(&src->link) != HFI_LINK_UP)
		return hfi_set_error(-ENETDOWN, "MAD send: the link of LID 0x%x is down",
				     src->lid);
	if (!fab_may_send(src, smp))
		return hfi_set_error(-ENETDOWN, "MAD send: LID 0x%x is %s; %s", src->lid,
				     hfi_lstate_name(atomic_load(&src->lstate)),
				     smp ? "SMPs need Init or later" :
				     "QP1 datagrams need Active (only SMPs pass before)");
	if (to->pkey_index >= src->npkeys)
		return hfi_set_error(-EINVAL, "MAD send: PKEY index %u is beyond the table "
				     "(%u entries)", to->pkey_index, src->npkeys);
	memset(&a, 0, sizeof(a));
	a.slid = src->lid;
	a.dlid = to->lid;
	a.src_qpn = smp ? HFI_QP0 : HFI_QP1;
	a.dest_qpn = to->qpn;
	a.qkey = to->qkey;
	a.pkey = src->pkeys[to->pkey_index];
	a.sl = to->sl;
	/* Under a subnet manager every SMP goes through the switch (directed routes too). */
	if (smp && fab_has_switch(fab))
		return fab_switch_smp_mad(fab, src_slot, &a, mad, len);
	slot = smp ? fab_slot_of_lid(fab, to->lid) : gsi_slot(fab, src_slot, to->lid);
	if (slot < 0) {
		fab_reap_periodic(fab, 100);
		return hfi_set_error(-EHOSTUNREACH, "MAD send: no port has LID 0x%x on fabric "
				     "'%s'%s", to->lid, fab->spec, fab_switch_programmed(fab) ?
				     " (or the switch has no route to it)" : "");
	}
	fab_count(src, FAB_CTR(tx_mads), 1);
	/* Into a receive context when the port takes it there and a 9B LRH can carry the LIDs. */
	if (fab_takes_mad(fab_port(fab, slot), to->qpn) && a.slid < HFI_9B_MCAST_BASE &&
	    a.dlid < HFI_9B_MCAST_BASE)
		fab_mad_to_data(fab, fab_src_port(fab, src_slot), slot, &a, mad, len);
	else
		fab_mad_to_ring(fab, slot, &a, mad, len);
	fab_capture_mad(fab, &a, mad, len);
	return 0;
}

bool
fab_9b_is_mad(const uint8_t *pkt, uint32_t len, unsigned int flags, uint32_t *qpn)
{
	struct hfi_9b_ud u;
	size_t off, plen;
	unsigned int sc;

	if (!(flags & FAB_PKT_9B) || hfi_9b_ud_parse(pkt, len, &u, &off, &plen) != 0)
		return false;
	sc = u.sc | ((flags & FAB_PKT_SC4) ? 0x10u : 0);
	*qpn = u.dest_qp;
	return (u.dest_qp == HFI_QP0 && sc == HFI_9B_SC_VL15) ||
	       (u.dest_qp == HFI_QP1 && sc != HFI_9B_SC_VL15);
}

bool
fab_packet_to_mad(struct hfi_fabric *fab, int src_slot, int dst_slot, const uint8_t *pkt,
		  uint32_t len, unsigned int flags)
{
	struct fab_port *src = fab_port(fab, src_slot), *dst = fab_port(fab, dst_slot);
	struct hfi_capture_mad a;
	struct hfi_9b_ud u;
	size_t off, plen;

	if (hfi_9b_ud_parse(pkt, len, &u, &off, &plen) != 0 || fab_takes_mad(dst, u.dest_qp))
		return false;
	fab_count(src, FAB_CTR(tx_mads), 1);
	/*
	 * What the receiving chip would flag (ICRC, PktLen) and what is no MAD
	 * the ring never gets: a MAD channel has no error bits to report them.
	 */
	if (atomic_load_explicit(&fab->hdr->lids[dst_slot], memory_order_acquire) == 0 ||
	    !hfi_9b_icrc_check(pkt, len) || (size_t)hfi_9b_len_dws(pkt) * 4 != len ||
	    plen < HFI_MAD_MIN_SIZE || plen > HFI_MAD_SIZE) {
		fab_count(dst, FAB_CTR(mad_drops), 1);
		return true;
	}
	memset(&a, 0, sizeof(a));
	a.slid = u.slid;
	a.dlid = u.dlid;
	a.src_qpn = u.src_qp;
	a.dest_qpn = u.dest_qp;
	a.qkey = u.qkey;
	a.pkey = u.pkey;
	/* SMPs have no SL of their own (VL15): the LRH's; GSI: the SL of the SC (identity map). */
	a.sl = u.dest_qp == HFI_QP0 ? u.sl : (uint8_t)(u.sc | ((flags & FAB_PKT_SC4) ? 0x10 : 0));
	fab_mad_to_ring(fab, dst_slot, &a, pkt + off, plen);
	return true;
}

int
fab_pop_mad(struct hfi_fabric *fab, int slot, struct hfi_mad_addr *from, void *buf,
	    size_t *len)
{
	struct fab_port *port = fab_port(fab, slot);
	struct fab_cell *c;
	uint64_t pos;
	int idx;

	c = ring_peek(fab, port, &port->mad, port_mad_cells(fab, slot), fab->hdr->cfg.mad_cells,
		      fab->mad_stride, &fab->stuck[slot][1], &pos, FAB_CTR(mad_drops));
	if (c == NULL)
		return -EAGAIN;
	memcpy(buf, c->data, c->len);
	*len = c->len;
	idx = pkey_index_of(port, c->pkey);
	memset(from, 0, sizeof(*from));
	from->lid = c->src_lid;
	from->qpn = c->src_qpn;
	from->dest_qpn = c->dest_qpn;
	from->qkey = c->qkey;
	from->sl = c->sl;
	from->pkey_index = (uint16_t)(idx < 0 ? 0 : idx);
	from->pkey = c->pkey;
	ring_pop(&port->mad, c, pos, fab->hdr->cfg.mad_cells);
	fab_count(port, FAB_CTR(rx_mads), 1);
	return 0;
}

/* ---- wake-ups ---- */

void
fab_wake(struct hfi_fabric *fab, int slot)
{
	struct fab_port *port = fab_port(fab, slot);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char name[FAB_WAKE_NAME_MAX];
	size_t len;

	memcpy(name, port->wake, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	len = strlen(name);
	if (len == 0)
		return;
	memcpy(addr.sun_path + 1, name, len);
	/* A full queue means a wake-up is already pending: ignore errors. */
	(void)sendto(fab->send_sock, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL,
		     (struct sockaddr *)&addr,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
}

void
fab_wake_drain(int fd)
{
	char buf[64];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* ---- administration ---- */

static int
port_by_lid(struct hfi_fabric *fab, uint32_t lid)
{
	int slot = fab_slot_of_lid(fab, lid);

	if (slot < 0)
		return hfi_set_error(-ENOENT, "no port has LID 0x%x on fabric '%s'", lid,
				     fab->spec);
	return slot;
}

static void
read_ctr(_Atomic uint64_t *ctr, struct hfi_port_counters *c)
{
	uint64_t *v = (uint64_t *)c;
	size_t i;

	for (i = 0; i < FAB_NCOUNTERS; i++)
		v[i] = atomic_load_explicit(&ctr[i], memory_order_relaxed);
}

static void
read_counters(struct fab_port *p, struct hfi_port_counters *c)
{
	read_ctr(p->ctr, c);
}

int
hfi_fabric_removed_ports(struct hfi_fabric *fab, uint32_t *lids, struct hfi_port_counters *c,
			 unsigned int max)
{
	struct fab_hdr *h = fab->hdr;
	unsigned int i, n = 0;

	fab_lock(fab);
	for (i = 0; i < h->cfg.max_ports; i++) {
		struct fab_port *p = &h->ports[i];

		/* epoch: attached once at least, so the slot's counters are a port's */
		if (atomic_load(&p->state) != PORT_FREE || p->epoch == 0)
			continue;
		if (n < max) {
			lids[n] = p->lid;
			read_counters(p, &c[n]);
		}
		n++;
	}
	fab_unlock(fab);
	return (int)n;
}

int
hfi_fabric_switch_counters(struct hfi_fabric *fab, struct hfi_port_counters *c)
{
	read_ctr(fab->hdr->sw_ctr, c);
	return fab_has_switch(fab) ? 0 : -ENOENT;
}

int
hfi_fabric_port_counters(struct hfi_fabric *fab, uint32_t lid, struct hfi_port_counters *c)
{
	int slot = port_by_lid(fab, lid);

	if (slot < 0)
		return slot;
	read_counters(fab_port(fab, slot), c);
	return 0;
}

int
hfi_fabric_total_counters(struct hfi_fabric *fab, struct hfi_port_counters *c)
{
	struct hfi_port_counters one;
	uint64_t *sum = (uint64_t *)c, *v = (uint64_t *)&one;
	unsigned int i;
	size_t k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i <= fab->hdr->cfg.max_ports; i++) {
		/* the switch's own SMA sends and receives too */
		if (i < fab->hdr->cfg.max_ports)
			read_counters(fab_port(fab, (int)i), &one);
		else
			hfi_fabric_switch_counters(fab, &one);
		for (k = 0; k < FAB_NCOUNTERS; k++)
			sum[k] += v[k];
	}
	return 0;
}

uint64_t
hfi_port_counters_drops(const struct hfi_port_counters *c)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < HFI_DROP_REASONS; i++)
		n += c->drops[i];
	return n;
}

const char *
hfi_drop_reason_name(unsigned int reason)
{
	static const char *const names[HFI_DROP_REASONS] = {
		[HFI_DROP_UNKNOWN_DLID] = "unknown_dlid",
		[HFI_DROP_LINK_DOWN] = "link_down",
		[HFI_DROP_FAULT] = "fault",
		[HFI_DROP_HOQ_TIMEOUT] = "hoq_timeout",
		[HFI_DROP_NOT_BYPASS] = "not_bypass",
		[HFI_DROP_DLID_MISMATCH] = "dlid_mismatch",
		[HFI_DROP_PORT_DISABLED] = "port_disabled",
		[HFI_DROP_PKEY] = "pkey",
		[HFI_DROP_NO_CONTEXT] = "no_context",
		[HFI_DROP_HDRQ_FULL] = "hdrq_full",
		[HFI_DROP_EAGER_FULL] = "eager_full",
		[HFI_DROP_EAGER_SMALL] = "eager_small",
		[HFI_DROP_DMA_ERROR] = "dma_error",
		[HFI_DROP_BAD_EGR_ENTRY] = "bad_egr_entry",
		[HFI_DROP_CTXT_ERROR] = "ctxt_error",
		[HFI_DROP_DEAD_SENDER] = "dead_sender",
		[HFI_DROP_NOT_ACTIVE] = "not_active",
		[HFI_DROP_NO_ROUTE] = "no_route",
		[HFI_DROP_RECEIVER_GONE] = "receiver_gone",
		[HFI_DROP_DEST_LINK_DOWN] = "dest_link_down",
		[HFI_DROP_DEST_NOT_ACTIVE] = "dest_not_active",
	};

	return reason < HFI_DROP_REASONS ? names[reason] : "?";
}

int
hfi_fabric_ports(struct hfi_fabric *fab, struct hfi_fabric_port_info *info, unsigned int max)
{
	struct fab_hdr *h = fab->hdr;
	unsigned int i, n = 0;

	fab_lock(fab);
	for (i = 0; i < h->cfg.max_ports; i++) {
		struct fab_port *p = &h->ports[i];

		if (atomic_load(&p->state) != PORT_ACTIVE)
			continue;
		if (n < max) {
			struct hfi_fabric_port_info *o = &info[n];

			memset(o, 0, sizeof(*o));
			o->lid = p->lid;
			o->pid = (int)atomic_load(&h->procs[p->proc].pid);
			o->role = (enum hfi_role)p->role;
			o->link = (enum hfi_link_state)atomic_load(&p->link);
			o->lstate = atomic_load(&p->lstate);
			o->npkeys = p->npkeys;
			memcpy(o->pkeys, p->pkeys, sizeof(o->pkeys));
			memcpy(o->name, p->name, sizeof(o->name));
		}
		n++;
	}
	fab_unlock(fab);
	return (int)n;
}

int
hfi_fabric_set_pkeys(struct hfi_fabric *fab, uint32_t lid, const uint16_t *pkeys,
		     unsigned int n)
{
	struct fab_port *p;
	int slot;

	if (n == 0 || n > HFI_PKEY_TABLE_SIZE)
		return hfi_set_error(-EINVAL, "PKEY table of %u entries: expected 1..%u", n,
				     HFI_PKEY_TABLE_SIZE);
	fab_lock(fab);
	slot = port_by_lid(fab, lid);
	if (slot >= 0) {
		p = fab_port(fab, slot);
		memset(p->pkeys, 0, sizeof(p->pkeys));
		memcpy(p->pkeys, pkeys, n * sizeof(*pkeys));
		p->npkeys = n;
	}
	fab_unlock(fab);
	return slot < 0 ? slot : 0;
}

int
hfi_fabric_set_link(struct hfi_fabric *fab, uint32_t lid, enum hfi_link_state state)
{
	struct fab_port *p;
	int slot;

	if (state != HFI_LINK_UP && state != HFI_LINK_DOWN)
		return hfi_set_error(-EINVAL, "link state %d: expected up (1) or down (0)", state);
	fab_lock(fab);
	slot = port_by_lid(fab, lid);
	if (slot >= 0) {
		p = fab_port(fab, slot);
		if (atomic_exchange(&p->link, (uint32_t)state) != (uint32_t)state) {
			atomic_store(&p->lstate, state == HFI_LINK_UP ? lstate_at_link_up(fab, p) :
				     HFI_LSTATE_DOWN);
			atomic_fetch_add(&p->link_gen, 1);
			fab_switch_port_link_locked(fab, slot, state == HFI_LINK_UP);
		}
	}
	fab_unlock(fab);
	if (slot < 0)
		return slot;
	fab_wake(fab, slot);
	return 0;
}

static int
check_mcast(uint32_t mlid)
{
	if (!hfi_lid_is_mcast(mlid))
		return hfi_set_error(-EINVAL, "LID 0x%x is not a multicast LID (0x%x..0x%x)",
				     mlid, HFI_LID_MCAST_BASE, HFI_LID_PERMISSIVE - 1);
	return 0;
}

int
hfi_fabric_mcast_join(struct hfi_fabric *fab, uint32_t mlid, uint32_t lid)
{
	struct fab_hdr *h = fab->hdr;
	int slot, rc = check_mcast(mlid), g, free_g = -1, empty_g = -1;

	if (rc != 0)
		return rc;
	fab_lock(fab);
	slot = port_by_lid(fab, lid);
	if (slot < 0) {
		rc = slot;
		goto out;
	}
	for (g = 0; g < HFI_FABRIC_MCAST_GROUPS; g++) {
		uint32_t m = atomic_load(&h->mcast[g].mlid);

		if (m == mlid)
			break;
		if (m == 0 && free_g < 0)
			free_g = g;
		if (m != 0 && empty_g < 0 && atomic_load(&h->mcast[g].members) == 0)
			empty_g = g;
	}
	/* All taken: a group every member left makes room (its MLID reaches everyone again). */
	if (free_g < 0)
		free_g = empty_g;
	if (g == HFI_FABRIC_MCAST_GROUPS) {
		if (free_g < 0) {
			rc = hfi_set_error(-ENOSPC, "fabric '%s': all %d multicast groups in use",
					   fab->spec, HFI_FABRIC_MCAST_GROUPS);
			goto out;
		}
		g = free_g;
		atomic_store(&h->mcast[g].members, 0);
		atomic_store(&h->mcast[g].mlid, mlid);
	}
	atomic_fetch_or(&h->mcast[g].members, UINT64_C(1) << slot);
out:
	fab_unlock(fab);
	return rc;
}

int
hfi_fabric_mcast_leave(struct hfi_fabric *fab, uint32_t mlid, uint32_t lid)
{
	struct fab_hdr *h = fab->hdr;
	int slot, g, rc = check_mcast(mlid);

	if (rc != 0)
		return rc;
	fab_lock(fab);
	slot = port_by_lid(fab, lid);
	rc = slot < 0 ? slot : -ENOENT;
	for (g = 0; slot >= 0 && g < HFI_FABRIC_MCAST_GROUPS; g++) {
		if (atomic_load(&h->mcast[g].mlid) != mlid)
			continue;
		if (atomic_fetch_and(&h->mcast[g].members, ~(UINT64_C(1) << slot)) &
		    (UINT64_C(1) << slot))
			rc = 0;
	}
	fab_unlock(fab);
	if (rc == -ENOENT && slot >= 0)
		hfi_set_error(rc, "LID 0x%x is not in group 0x%x", lid, mlid);
	return rc;
}

int
hfi_fabric_lid_alive(struct hfi_fabric *fab, uint32_t lid)
{
	hfi_fabric_reap(fab);
	return fab_slot_of_lid(fab, lid) >= 0;
}

/* ---- capture ---- */

int
hfi_fabric_capture_start(struct hfi_fabric *fab, const char *path)
{
	struct hfi_capture *cap;
	int rc;

	pthread_mutex_lock(&fab->cap_lock);
	if (fab->cap != NULL) {
		pthread_mutex_unlock(&fab->cap_lock);
		return hfi_set_error(-EBUSY, "fabric '%s' is already being captured", fab->spec);
	}
	rc = hfi_capture_open(path, &cap);
	if (rc == 0) {
		fab->cap = cap;
		atomic_store(&fab->capturing, true);
	}
	pthread_mutex_unlock(&fab->cap_lock);
	return rc;
}

int
hfi_fabric_capture_stop(struct hfi_fabric *fab)
{
	int rc = 0;

	atomic_store(&fab->capturing, false);
	pthread_mutex_lock(&fab->cap_lock);
	if (fab->cap != NULL)
		rc = hfi_capture_close(fab->cap);
	fab->cap = NULL;
	pthread_mutex_unlock(&fab->cap_lock);
	return rc;
}

void
fab_capture_data(struct hfi_fabric *fab, const uint8_t *pkt, uint32_t len, unsigned int flags)
{
	if (!atomic_load_explicit(&fab->capturing, memory_order_relaxed))
		return;
	pthread_mutex_lock(&fab->cap_lock);
	if (fab->cap != NULL) {
		if (flags & FAB_PKT_9B)
			hfi_capture_9b(fab->cap, pkt, len);
		else
			hfi_capture_16b(fab->cap, pkt, len);
	}
	pthread_mutex_unlock(&fab->cap_lock);
}
