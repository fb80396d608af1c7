/*
 * wb-tune: check (and with --apply, fix what can be fixed at run time) the
 * host settings that decide wirebook's latency: isolated cores, tickless
 * cores, irqbalance, the NIC's IRQ affinity, the CPU frequency governor,
 * C-states, transparent huge pages, huge pages for /dev/shm (where the book
 * is published) and the NIC's NUMA node against the cores the builder is
 * pinned to.
 *
 * Every check prints one line "STATUS  name  finding", then "-> what to
 * do" when it is not OK. STATUS is OK, WARN, SKIP (the host does not expose
 * the setting: a VM, a virtual NIC, an old kernel) or FIXED (--apply
 * changed it). Nothing is written without --apply, and --apply only does
 * run-time changes that a reboot undoes (sysfs/procfs writes, stopping
 * irqbalance, remounting /dev/shm); kernel command-line and fstab settings
 * are only recommended.
 *
 * --root DIR reads (and with --apply writes) DIR/proc and DIR/sys instead
 * of /proc and /sys, so the checks can be tested against a fake tree.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "common/cpu_list.h"
#include "common/shm_mount.h"
#include "common/version.h"

/* C-states whose exit latency exceeds this are "deep" for a pinned core. */
#define CSTATE_MAX_EXIT_LATENCY_US 2

struct tune {
	const char *root;	/* "" for the real /proc and /sys */
	const char *iface;
	struct cpu_list cpus;	/* the builder's cores (--cpus), else every online cpu */
	bool cpus_given;
	bool apply;
	struct cpu_list online;
	char cmdline[4096];
	unsigned int ok, warn, skip, fixed, failed;
};

/* ---- file access under --root ------------------------------------------ */

static int path_of(const struct tune *t, char *out, size_t n, const char *fmt, va_list ap)
{
	char rel[PATH_MAX];
	int len = vsnprintf(rel, sizeof(rel), fmt, ap);

	if (len < 0 || (size_t)len >= sizeof(rel))
		return -1;
	len = snprintf(out, n, "%s%s", t->root, rel);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* Read a small file (first line or whole, trailing newline cut); -1 if missing. */
static int read_text(const struct tune *t, char *buf, size_t n, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	size_t got;

	va_start(ap, fmt);
	if (path_of(t, path, sizeof(path), fmt, ap) < 0) {
		va_end(ap);
		return -1;
	}
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return -1;
	got = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[got] = '\0';
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return 0;
}

static int write_text(const struct tune *t, const char *value, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	int rc = 0;

	va_start(ap, fmt);
	if (path_of(t, path, sizeof(path), fmt, ap) < 0) {
		va_end(ap);
		return -ENAMETOOLONG;
	}
	va_end(ap);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fputs(value, f) == EOF)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;	/* sysfs reports a refused value at close */
	return rc;
}

static bool exists(const struct tune *t, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = path_of(t, path, sizeof(path), fmt, ap);
	va_end(ap);
	return rc == 0 && access(path, F_OK) == 0;
}

/* ---- reporting ----------------------------------------------------------- */

static void vline(const char *status, const char *check, const char *fmt, va_list ap)
{
	printf("%-6s %-15s ", status, check);
	vprintf(fmt, ap);
	putchar('\n');
}

static void report_ok(struct tune *t, const char *check, const char *fmt, ...)
{
	va_list ap;

	t->ok++;
	va_start(ap, fmt);
	vline("OK", check, fmt, ap);
	va_end(ap);
}

static void report_warn(struct tune *t, const char *check, const char *fmt, ...)
{
	va_list ap;

	t->warn++;
	va_start(ap, fmt);
	vline("WARN", check, fmt, ap);
	va_end(ap);
}

static void report_skip(struct tune *t, const char *check, const char *fmt, ...)
{
	va_list ap;

	t->skip++;
	va_start(ap, fmt);
	vline("SKIP", check, fmt, ap);
	va_end(ap);
}

static void report_fixed(struct tune *t, const char *check, const char *fmt, ...)
{
	va_list ap;

	t->fixed++;
	va_start(ap, fmt);
	vline("FIXED", check, fmt, ap);
	va_end(ap);
}

static void recommend(const char *fmt, ...)
{
	va_list ap;

	printf("%-6s %-15s -> ", "", "");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * Outcome of one --apply write: true when it worked; a failure is counted
 * and its error kept for the check's report (sysfs refuses some values,
 * e.g. managed IRQs' affinity).
 */
static bool apply_write(struct tune *t, int rc, int *last_err)
{
	if (rc == 0)
		return true;
	t->failed++;
	*last_err = -rc;
	return false;
}

static void report_apply_failures(int failures, int last_err)
{
	if (failures)
		printf("%-6s %-15s -> --apply failed on %d writes (last: %s)\n", "", "", failures,
		       strerror(last_err));
}

/* ---- helpers -------------------------------------------------------------- */

/* Value of a kernel parameter in /proc/cmdline ("isolcpus=..."), or NULL. */
static const char *cmdline_param(const struct tune *t, const char *name, char *out, size_t n)
{
	size_t len = strlen(name);
	const char *p = t->cmdline;

	while (*p) {
		while (*p == ' ')
			p++;
		if (strncmp(p, name, len) == 0 && (p[len] == '=' || p[len] == ' ' || !p[len])) {
			const char *v = p[len] == '=' ? p + len + 1 : p + len;
			size_t vlen = strcspn(v, " ");

			snprintf(out, n, "%.*s", (int)vlen, v);
			return out;
		}
		p += strcspn(p, " ");
	}
	return NULL;
}

/* isolcpus=managed_irq,domain,2-3: the cpu list after the flags. */
static const char *isolcpus_list(const char *value)
{
	const char *p = value;

	while (*p && !isdigit((unsigned char)*p)) {
		const char *comma = strchr(p, ',');

		if (!comma)
			return p + strlen(p);
		p = comma + 1;
	}
	return p;
}

static const char *fmt_cpus(const struct cpu_list *l, char *buf, size_t n)
{
	cpu_list_format(l, buf, n);
	if (!buf[0])
		snprintf(buf, n, "none");
	return buf;
}

/* The selected value of a sysfs choice file: "always [madvise] never" -> madvise. */
static const char *bracketed(const char *text, char *out, size_t n)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;

	if (!open || !close)
		snprintf(out, n, "%s", text);
	else
		snprintf(out, n, "%.*s", (int)(close - open - 1), open + 1);
	return out;
}

/* ---- checks --------------------------------------------------------------- */

static void check_isolcpus(struct tune *t)
{
	char text[1024], param[1024], a[256], b[256];
	struct cpu_list isolated;
	const char *source;

	if (read_text(t, text, sizeof(text), "/sys/devices/system/cpu/isolated") == 0)
		source = "/sys/devices/system/cpu/isolated";
	else if (cmdline_param(t, "isolcpus", param, sizeof(param)))
		snprintf(text, sizeof(text), "%s", isolcpus_list(param)), source = "isolcpus=";
	else if (t->cmdline[0])
		text[0] = '\0', source = "/proc/cmdline";
	else {
		report_skip(t, "isolcpus", "neither /sys/devices/system/cpu/isolated nor /proc/cmdline readable");
		return;
	}
	if (cpu_list_parse(text, &isolated) < 0) {
		report_warn(t, "isolcpus", "cannot parse %s: '%s'", source, text);
		return;
	}
	if (t->cpus_given ? cpu_list_subset(&t->cpus, &isolated) : cpu_list_count(&isolated) > 0) {
		report_ok(t, "isolcpus", "isolated cpus %s%s%s", fmt_cpus(&isolated, a, sizeof(a)),
			  t->cpus_given ? " include the builder cpus " : "",
			  t->cpus_given ? fmt_cpus(&t->cpus, b, sizeof(b)) : "");
		if (!t->cpus_given)
			recommend("pin the builder there: wirebookd --cpus %s", a);
		return;
	}
	if (t->cpus_given)
		report_warn(t, "isolcpus", "builder cpus %s not isolated (isolated: %s)",
			    fmt_cpus(&t->cpus, b, sizeof(b)), fmt_cpus(&isolated, a, sizeof(a)));
	else
		report_warn(t, "isolcpus", "no cpu is isolated from the scheduler");
	recommend("add isolcpus=managed_irq,domain,%s to GRUB_CMDLINE_LINUX in /etc/default/grub, "
		  "update-grub, reboot (the scheduler then leaves them to wirebook)",
		  t->cpus_given ? b : "<builder cpus>");
}

static void check_nohz_full(struct tune *t)
{
	char text[1024], param[1024], a[256], b[256];
	struct cpu_list tickless;

	if (read_text(t, text, sizeof(text), "/sys/devices/system/cpu/nohz_full") < 0) {
		if (cmdline_param(t, "nohz_full", param, sizeof(param)))
			snprintf(text, sizeof(text), "%s", param);
		else if (t->cmdline[0] && exists(t, "/sys/devices/system/cpu/online"))
			text[0] = '\0';
		else {
			report_skip(t, "nohz_full", "/sys/devices/system/cpu/nohz_full missing "
				    "(kernel without NO_HZ_FULL?)");
			return;
		}
	}
	if (cpu_list_parse(text, &tickless) < 0) {
		report_warn(t, "nohz_full", "cannot parse '%s'", text);
		return;
	}
	if (t->cpus_given ? cpu_list_subset(&t->cpus, &tickless) : cpu_list_count(&tickless) > 0) {
		report_ok(t, "nohz_full", "tickless cpus %s", fmt_cpus(&tickless, a, sizeof(a)));
		return;
	}
	if (t->cpus_given)
		report_warn(t, "nohz_full", "builder cpus %s keep the scheduler tick (nohz_full: %s)",
			    fmt_cpus(&t->cpus, b, sizeof(b)), fmt_cpus(&tickless, a, sizeof(a)));
	else
		report_warn(t, "nohz_full", "no cpu runs tickless");
	recommend("add nohz_full=%s rcu_nocbs=%s to the kernel command line and reboot (a "
		  "busy-polling thread then runs without timer interrupts)",
		  t->cpus_given ? b : "<builder cpus>", t->cpus_given ? b : "<builder cpus>");
}

/* The pid of a running irqbalance, 0 if none, -1 if /proc cannot be read. */
static long irqbalance_pid(const struct tune *t)
{
	char path[PATH_MAX], comm[64];
	struct dirent *e;
	DIR *d;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/proc", t->root);
	d = opendir(path);
	if (!d)
		return -1;
	while (!pid && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (read_text(t, comm, sizeof(comm), "/proc/%s/comm", e->d_name) == 0 &&
		    strcmp(comm, "irqbalance") == 0)
			pid = strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return pid;
}

static void check_irqbalance(struct tune *t)
{
	long pid = irqbalance_pid(t);

	if (pid < 0) {
		report_skip(t, "irqbalance", "/proc not readable");
		return;
	}
	if (pid == 0) {
		report_ok(t, "irqbalance", "not running");
		return;
	}
	if (t->apply && t->root[0] == '\0') {
		int rc = system("systemctl stop irqbalance >/dev/null 2>&1");

		if (rc == 0 && irqbalance_pid(t) == 0) {
			report_fixed(t, "irqbalance", "stopped (systemctl stop irqbalance; "
				     "it starts again at boot unless disabled)");
			return;
		}
	}
	report_warn(t, "irqbalance", "running (pid %ld): it moves NIC interrupts onto any core, "
		    "the builder's included", pid);
	recommend("systemctl disable --now irqbalance, or set IRQBALANCE_BANNED_CPULIST=<builder "
		  "cpus> in /etc/default/irqbalance");
}

/* The NIC's cpus: its NUMA node's, or every online cpu without NUMA information. */
static int nic_node(const struct tune *t, struct cpu_list *node_cpus)
{
	char text[64], list[1024];
	int node;

	*node_cpus = t->online;
	if (!exists(t, "/sys/class/net/%s/device", t->iface))
		return -2;	/* no device: virtual interface */
	if (read_text(t, text, sizeof(text), "/sys/class/net/%s/device/numa_node", t->iface) < 0)
		return -1;	/* a device without NUMA information (virtio, one node) */
	node = atoi(text);
	if (node < 0)
		return -1;
	if (read_text(t, list, sizeof(list), "/sys/devices/system/node/node%d/cpulist", node) == 0)
		cpu_list_parse(list, node_cpus);
	return node;
}

/* "name" as a whole word in an /proc/interrupts line ("eth0-TxRx-3", not "eth01"). */
static bool irq_line_names(const char *line, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = strstr(line, name); p; p = strstr(p + 1, name))
		if (!isalnum((unsigned char)p[len]) && (p == line || !isalnum((unsigned char)p[-1])))
			return true;
	return false;
}

/*
 * IRQ numbers of the NIC's queues: its PCI device's MSI vectors, else the
 * /proc/interrupts lines naming the interface or its device ("virtio2-input.0"
 * for a virtio NIC whose device is virtio2); configuration vectors are left out.
 */
static int nic_irqs(const struct tune *t, int *irqs, int max)
{
	char path[PATH_MAX], link[PATH_MAX], line[4096], devname[PATH_MAX] = "";
	struct dirent *e;
	ssize_t len;
	int n = 0;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/device/msi_irqs", t->root, t->iface);
	d = opendir(path);
	if (d) {
		while (n < max && (e = readdir(d)))
			if (isdigit((unsigned char)e->d_name[0]))
				irqs[n++] = atoi(e->d_name);
		closedir(d);
		if (n)
			return n;
	}
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/device", t->root, t->iface);
	len = readlink(path, link, sizeof(link) - 1);
	if (len > 0) {
		link[len] = '\0';
		snprintf(devname, sizeof(devname), "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
	}
	snprintf(path, sizeof(path), "%s/proc/interrupts", t->root);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		const char *first = line + strspn(line, " ");

		if (!isdigit((unsigned char)*first) || strstr(line, "-config"))
			continue;
		if (irq_line_names(line, t->iface) || (devname[0] && irq_line_names(line, devname)))
			irqs[n++] = atoi(first);
	}
	fclose(f);
	return n;
}

static void check_irq_affinity(struct tune *t)
{
	int irqs[256], n, on_builder = 0, off_node = 0, fixed = 0, unreadable = 0;
	int apply_failures = 0, last_err = 0;
	struct cpu_list node_cpus, target;
	char a[256], b[256];

	if (!t->iface) {
		report_skip(t, "irq-affinity", "no --iface given");
		return;
	}
	nic_node(t, &node_cpus);
	n = nic_irqs(t, irqs, (int)(sizeof(irqs) / sizeof(irqs[0])));
	if (n == 0) {
		report_skip(t, "irq-affinity", "no IRQs found for %s (virtual interface such as "
			    "veth, or a driver that names its vectors differently)", t->iface);
		return;
	}
	/*
	 * Where the NIC's interrupts belong: off the builder's cores (an IRQ
	 * there preempts a polling thread), and on the NIC's node. When the
	 * builder uses every cpu of the node, off the builder wins: the packet
	 * crosses the interconnect once instead of stalling the book.
	 */
	struct cpu_list none = { { 0 } };
	const struct cpu_list *builder = t->cpus_given ? &t->cpus : &none;

	cpu_list_minus(&target, &node_cpus, builder);
	if (cpu_list_count(&target) == 0)
		cpu_list_minus(&target, &t->online, builder);
	if (cpu_list_count(&target) == 0)
		target = node_cpus;	/* the builder has every cpu: nothing better */

	for (int i = 0; i < n; i++) {
		char text[1024];
		struct cpu_list aff;

		if (read_text(t, text, sizeof(text), "/proc/irq/%d/smp_affinity_list", irqs[i]) < 0 ||
		    cpu_list_parse(text, &aff) < 0) {
			unreadable++;
			continue;
		}
		if (cpu_list_subset(&aff, &target))
			continue;
		if (t->apply) {
			if (apply_write(t, write_text(t, fmt_cpus(&target, a, sizeof(a)),
						      "/proc/irq/%d/smp_affinity_list", irqs[i]),
					&last_err)) {
				fixed++;
				continue;
			}
			apply_failures++;
		}
		if (cpu_list_intersects(&aff, builder))
			on_builder++;
		else
			off_node++;
	}
	if (on_builder || off_node) {
		report_warn(t, "irq-affinity", "%s: %d of %d IRQs can run on builder cpus %s, %d more "
			    "outside cpus %s (the NIC's node, off the builder)", t->iface, on_builder, n,
			    t->cpus_given ? fmt_cpus(&t->cpus, b, sizeof(b)) : "(none given)",
			    off_node, fmt_cpus(&target, a, sizeof(a)));
		recommend("echo %s > /proc/irq/N/smp_affinity_list for each NIC queue (wb-tune "
			  "--apply does it), with irqbalance stopped", fmt_cpus(&target, a, sizeof(a)));
		report_apply_failures(apply_failures, last_err);
		return;
	}
	if (fixed)
		report_fixed(t, "irq-affinity", "%s: %d IRQs moved to cpus %s", t->iface, fixed,
			     fmt_cpus(&target, a, sizeof(a)));
	else
		report_ok(t, "irq-affinity", "%s: %d IRQs on cpus %s (NIC's node, off the builder)%s",
			  t->iface, n - unreadable, fmt_cpus(&target, a, sizeof(a)),
			  unreadable ? "; some unreadable" : "");
}

static void check_governor(struct tune *t)
{
	int slow = 0, seen = 0, fixed = 0, apply_failures = 0, last_err = 0;
	char gov[64], first_slow[64] = "", avail[256];

	for (unsigned int c = 0; c < CPU_LIST_MAX; c++) {
		if (!cpu_list_has(&t->cpus, c))
			continue;
		if (read_text(t, gov, sizeof(gov),
			      "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", c) < 0)
			continue;
		seen++;
		if (strcmp(gov, "performance") == 0)
			continue;
		if (t->apply &&
		    read_text(t, avail, sizeof(avail),
			      "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_available_governors", c) == 0 &&
		    strstr(avail, "performance")) {
			if (apply_write(t, write_text(t, "performance",
						      "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor",
						      c), &last_err)) {
				fixed++;
				continue;
			}
			apply_failures++;
		}
		if (!slow++)
			snprintf(first_slow, sizeof(first_slow), "%s", gov);
	}
	if (!seen) {
		report_skip(t, "governor", "no cpufreq on the checked cpus (VM or fixed frequency)");
		return;
	}
	if (slow) {
		report_warn(t, "governor", "%d of %d checked cpus use '%s', not 'performance'", slow, seen,
			    first_slow);
		recommend("cpupower frequency-set -g performance (wb-tune --apply does it per cpu); "
			  "ramping the clock up costs tens of microseconds");
		report_apply_failures(apply_failures, last_err);
	} else if (fixed)
		report_fixed(t, "governor", "%d cpus set to 'performance'", fixed);
	else
		report_ok(t, "governor", "'performance' on all %d checked cpus", seen);
}

static void check_cstates(struct tune *t)
{
	char param[64], name[64], lat[32], dis[16], deep_name[64] = "";
	int seen_cpus = 0, deep = 0, fixed = 0, apply_failures = 0, last_err = 0;
	unsigned long deep_latency = 0;

	if (cmdline_param(t, "idle", param, sizeof(param)) && strcmp(param, "poll") == 0) {
		report_ok(t, "c-states", "idle=poll on the kernel command line");
		return;
	}
	for (unsigned int c = 0; c < CPU_LIST_MAX; c++) {
		bool any = false;

		if (!cpu_list_has(&t->cpus, c))
			continue;
		for (int s = 0; s < 16; s++) {
			if (read_text(t, name, sizeof(name), "/sys/devices/system/cpu/cpu%u/cpuidle/state%d/name",
				      c, s) < 0)
				break;
			any = true;
			if (read_text(t, lat, sizeof(lat),
				      "/sys/devices/system/cpu/cpu%u/cpuidle/state%d/latency", c, s) < 0 ||
			    strtoul(lat, NULL, 10) <= CSTATE_MAX_EXIT_LATENCY_US)
				continue;
			if (read_text(t, dis, sizeof(dis),
				      "/sys/devices/system/cpu/cpu%u/cpuidle/state%d/disable", c, s) == 0 &&
			    strcmp(dis, "1") == 0)
				continue;
			if (t->apply) {
				if (apply_write(t, write_text(t, "1",
							      "/sys/devices/system/cpu/cpu%u/cpuidle/state%d/disable",
							      c, s), &last_err)) {
					fixed++;
					continue;
				}
				apply_failures++;
			}
			if (!deep++ || strtoul(lat, NULL, 10) > deep_latency) {
				deep_latency = strtoul(lat, NULL, 10);
				snprintf(deep_name, sizeof(deep_name), "%s", name);
			}
		}
		seen_cpus += any;
	}
	if (!seen_cpus) {
		report_skip(t, "c-states", "no cpuidle states exposed (VM, or idle=poll/halt)");
		return;
	}
	if (deep) {
		report_warn(t, "c-states", "%d deep idle states enabled on checked cpus (deepest %s, "
			    "%lu us exit latency)", deep, deep_name, deep_latency);
		recommend("disable states over %d us on the builder cpus (wb-tune --apply writes "
			  "cpuidle/stateN/disable), or boot with intel_idle.max_cstate=1 "
			  "processor.max_cstate=1", CSTATE_MAX_EXIT_LATENCY_US);
		report_apply_failures(apply_failures, last_err);
	} else if (fixed)
		report_fixed(t, "c-states", "%d deep idle states disabled", fixed);
	else
		report_ok(t, "c-states", "no idle state over %d us exit latency on %d checked cpus",
			  CSTATE_MAX_EXIT_LATENCY_US, seen_cpus);
}

static void check_thp(struct tune *t)
{
	static const char *const files[] = { "enabled", "defrag" };
	char text[256], mode[256];
	int bad = 0, seen = 0, fixed = 0, last_err = 0;

	for (size_t i = 0; i < 2; i++) {
		if (read_text(t, text, sizeof(text), "/sys/kernel/mm/transparent_hugepage/%s",
			      files[i]) < 0)
			continue;
		seen++;
		bracketed(text, mode, sizeof(mode));
		if (strcmp(mode, "always") != 0)
			continue;
		if (t->apply && apply_write(t, write_text(t, "madvise",
							  "/sys/kernel/mm/transparent_hugepage/%s",
							  files[i]), &last_err)) {
			report_fixed(t, "thp", "%s: always -> madvise", files[i]);
			fixed++;
			continue;
		}
		bad++;
		report_warn(t, "thp", "transparent_hugepage/%s is 'always': khugepaged and "
			    "compaction stall threads at random", files[i]);
		recommend("echo madvise > /sys/kernel/mm/transparent_hugepage/%s (wb-tune --apply), "
			  "or transparent_hugepage=madvise on the kernel command line", files[i]);
		report_apply_failures(t->apply, last_err);
	}
	if (!seen)
		report_skip(t, "thp", "/sys/kernel/mm/transparent_hugepage missing");
	else if (!bad && !fixed)
		report_ok(t, "thp", "not 'always' (no background collapsing or compaction stalls)");
}

/*
 * The flags for remounting /dev/shm with its per-mount flags as they are: a
 * remount sets them all from its arguments, so leaving out nosuid, nodev or
 * noexec would drop them, and a mount with none of relatime/noatime shown
 * is strictatime. The tmpfs options (size, mode...) are kept by tmpfs itself.
 */
static unsigned long shm_remount_flags(const char *opts)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} map[] = {
		{ "ro", MS_RDONLY }, { "nosuid", MS_NOSUID }, { "nodev", MS_NODEV },
		{ "noexec", MS_NOEXEC }, { "sync", MS_SYNCHRONOUS }, { "dirsync", MS_DIRSYNC },
		{ "noatime", MS_NOATIME }, { "nodiratime", MS_NODIRATIME },
		{ "relatime", MS_RELATIME }, { "lazytime", MS_LAZYTIME },
	};
	unsigned long flags = MS_REMOUNT;

	for (const char *p = opts; *p; p += strcspn(p, ","), p += *p == ',') {
		size_t len = strcspn(p, ",");

		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (strlen(map[i].name) == len && strncmp(p, map[i].name, len) == 0)
				flags |= map[i].flag;
	}
	if (!(flags & (MS_NOATIME | MS_RELATIME)))
		flags |= MS_STRICTATIME;
	return flags;
}

/*
 * --apply under --root: there is no mount to change in a fake tree, so the
 * remount is played on its proc/mounts instead: line `index` gets
 * huge=advise in place of any huge= option, and the tests read it back.
 */
static int fake_shm_remount(const struct tune *t, int index)
{
	char path[PATH_MAX], *line = NULL, *out = NULL;
	size_t cap = 0, out_len = 0;
	struct mount_line m;
	FILE *f, *mem;
	int i = 0, rc;

	snprintf(path, sizeof(path), "%s/proc/mounts", t->root);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	mem = open_memstream(&out, &out_len);
	if (!mem) {
		rc = -errno;
		fclose(f);
		return rc;
	}
	for (; getline(&line, &cap, f) > 0; i++) {
		char opts[4096];

		if (i != index || mount_line_fields(line, &m) < 0) {
			fputs(line, mem);
			continue;
		}
		snprintf(opts, sizeof(opts), "%.*s", m.len[3], m.field[3]);
		fprintf(mem, "%.*s", (int)(m.field[3] - line), line);
		for (const char *p = opts; *p; p += strcspn(p, ","), p += *p == ',')
			if (strncmp(p, "huge=", 5) != 0)
				fprintf(mem, "%.*s,", (int)strcspn(p, ","), p);
		fprintf(mem, "huge=advise%s", m.field[3] + m.len[3]);
	}
	free(line);
	fclose(f);
	if (fclose(mem) != 0)
		return -ENOMEM;
	rc = write_text(t, out, "/proc/mounts");
	free(out);
	return rc;
}

/*
 * shm_open() puts the book in /dev/shm, a tmpfs mount: its pages are huge
 * only by the mount's own huge= option (transparent_hugepage/shmem_enabled
 * covers SysV shm and memfd, not /dev/shm), and wirebookd's MADV_HUGEPAGE
 * needs huge=advise at least. A remount can change it; tmpfs keeps its
 * size and other options.
 */
static void check_shm_huge(struct tune *t)
{
	char type[64], opts[4096], huge[64], state[96];
	int index, last_err = 0;

	index = shm_mount_find(t->root, type, sizeof(type), opts, sizeof(opts));
	if (index == -2) {
		report_skip(t, "shm-huge", "/proc/mounts not readable");
		return;
	}
	if (index == -1) {
		report_skip(t, "shm-huge", "no /dev/shm mount in /proc/mounts");
		return;
	}
	if (strcmp(type, "tmpfs") != 0) {
		report_skip(t, "shm-huge", "/dev/shm is %s, not tmpfs", type);
		return;
	}
	if (!mount_option(opts, "huge", huge, sizeof(huge)))
		huge[0] = '\0';	/* the kernel shows no huge= for huge=never */
	if (shm_mount_allows_huge(type, opts)) {
		report_ok(t, "shm-huge", "/dev/shm huge=%s: the book's shared memory can use huge pages",
			  huge);
		return;
	}
	if (huge[0])
		snprintf(state, sizeof(state), "is huge=%s", huge);
	else
		snprintf(state, sizeof(state), "has no huge= option");
	if (t->apply) {
		int rc;

		if (t->root[0] == '\0')
			rc = mount("none", "/dev/shm", NULL, shm_remount_flags(opts), "huge=advise") < 0 ?
			     -errno : 0;
		else
			rc = fake_shm_remount(t, index);
		if (apply_write(t, rc, &last_err)) {
			report_fixed(t, "shm-huge", "/dev/shm remounted huge=advise (a reboot "
				     "undoes it unless fstab says huge=advise)");
			return;
		}
	}
	report_warn(t, "shm-huge", "/dev/shm %s: the published book sits on 4 KiB pages, "
		    "a TLB miss per symbol publish", state);
	recommend("mount -o remount,huge=advise /dev/shm (wb-tune --apply does it); to keep it, "
		  "add huge=advise to the options of /dev/shm's line in /etc/fstab");
	report_apply_failures(t->apply, last_err);
}

static void check_numa(struct tune *t)
{
	struct cpu_list node_cpus;
	char a[256], b[256];
	int node;

	if (!t->iface) {
		report_skip(t, "nic-numa", "no --iface given");
		return;
	}
	if (!exists(t, "/sys/class/net/%s", t->iface)) {
		report_warn(t, "nic-numa", "no interface %s", t->iface);
		return;
	}
	node = nic_node(t, &node_cpus);
	if (node == -2) {
		report_skip(t, "nic-numa", "%s has no device (virtual interface)", t->iface);
		return;
	}
	if (node == -1) {
		report_ok(t, "nic-numa", "%s reports no NUMA node (single node, or a VM's device)",
			  t->iface);
		return;
	}
	if (!t->cpus_given) {
		report_ok(t, "nic-numa", "%s is on node %d (cpus %s)", t->iface, node,
			  fmt_cpus(&node_cpus, a, sizeof(a)));
		recommend("pin the builder there: wirebookd --cpus <two of %s>", a);
		return;
	}
	if (cpu_list_subset(&t->cpus, &node_cpus)) {
		report_ok(t, "nic-numa", "builder cpus %s are on %s's node %d",
			  fmt_cpus(&t->cpus, b, sizeof(b)), t->iface, node);
		return;
	}
	report_warn(t, "nic-numa", "builder cpus %s are not all on %s's node %d (cpus %s): every "
		    "event crosses the interconnect", fmt_cpus(&t->cpus, b, sizeof(b)), t->iface, node,
		    fmt_cpus(&node_cpus, a, sizeof(a)));
	recommend("restart wirebookd with --cpus taken from %s", a);
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: wb-tune [--check] [--apply] [--iface IF] [--cpus LIST] [--root DIR]\n"
		"\n"
		"Report the host settings that decide wirebook's latency, each OK, WARN (with\n"
		"what to do), SKIP (not exposed here, e.g. in a VM) or FIXED:\n"
		"  isolcpus, nohz_full   are the builder cpus isolated and tickless?\n"
		"  irqbalance            running? (it moves NIC interrupts onto pinned cores)\n"
		"  irq-affinity          the NIC's queue IRQs: on its NUMA node, off builder cpus?\n"
		"  governor              cpufreq governor 'performance' on the checked cpus?\n"
		"  c-states              idle states deeper than %d us exit latency enabled?\n"
		"  thp                   transparent huge pages 'always'?\n"
		"  shm-huge              /dev/shm (the published book) mounted huge=advise?\n"
		"  nic-numa              the NIC's NUMA node against the builder cpus\n"
		"\n"
		"  -c, --check        report only (the default); changes nothing\n"
		"  -a, --apply        also fix what can be fixed at run time (governor, c-states,\n"
		"                     thp, IRQ affinity, stop irqbalance, remount /dev/shm\n"
		"                     huge=advise) and say what was done; kernel command-line\n"
		"                     and fstab settings are only recommended\n"
		"  -i, --iface IF     the NIC wirebook receives on\n"
		"  -C, --cpus LIST    the builder's cpus, e.g. 2-3 (default: every online cpu)\n"
		"      --root DIR     read DIR/proc and DIR/sys instead of /proc and /sys (tests;\n"
		"                     --apply then edits DIR/proc/mounts instead of remounting)\n"
		"  -h, --help         this help\n"
		"      --version\n"
		"\n"
		"Exit status: 0 nothing to warn about, 1 warnings remain, 2 usage error.\n",
		CSTATE_MAX_EXIT_LATENCY_US);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "apply", no_argument, NULL, 'a' },
		{ "iface", required_argument, NULL, 'i' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct tune t = { .root = "" };
	char text[1024], a[256];
	int opt;

	if (tool_version_option(argc, argv, "wb-tune"))
		return 0;
	while ((opt = getopt_long(argc, argv, "cai:C:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c': break;
		case 'a': t.apply = true; break;
		case 'i': t.iface = optarg; break;
		case 'C':
			if (cpu_list_parse(optarg, &t.cpus) < 0 || cpu_list_count(&t.cpus) == 0) {
				fprintf(stderr, "wb-tune: --cpus '%s': expected a cpu list like 2-3 or 2,5\n",
					optarg);
				return 2;
			}
			t.cpus_given = true;
			break;
		case 'r': t.root = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "wb-tune: unexpected argument '%s' (it takes options only)\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (t.iface && (strchr(t.iface, '/') || strstr(t.iface, ".."))) {
		fprintf(stderr, "wb-tune: --iface '%s' is not an interface name\n", t.iface);
		return 2;
	}
	if (read_text(&t, text, sizeof(text), "/sys/devices/system/cpu/online") < 0 ||
	    cpu_list_parse(text, &t.online) < 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		memset(&t.online, 0, sizeof(t.online));
		for (long c = 0; c < n && c < CPU_LIST_MAX; c++)
			cpu_list_set(&t.online, (unsigned int)c);
	}
	if (!t.cpus_given)
		t.cpus = t.online;
	if (read_text(&t, t.cmdline, sizeof(t.cmdline), "/proc/cmdline") < 0)
		t.cmdline[0] = '\0';
	if (t.apply && geteuid() != 0 && t.root[0] == '\0')
		fprintf(stderr, "wb-tune: --apply without root: writes will fail\n");

	printf("wb-tune: %s; iface %s; %s cpus %s\n", t.apply ? "checking and applying" : "checking",
	       t.iface ? t.iface : "(none)", t.cpus_given ? "builder" : "all online",
	       fmt_cpus(&t.cpus, a, sizeof(a)));
	check_isolcpus(&t);
	check_nohz_full(&t);
	check_irqbalance(&t);
	check_irq_affinity(&t);
	check_governor(&t);
	check_cstates(&t);
	check_thp(&t);
	check_shm_huge(&t);
	check_numa(&t);
	printf("wb-tune: %u OK, %u WARN, %u SKIP, %u FIXED%s\n", t.ok, t.warn, t.skip, t.fixed,
	       t.apply ? "" : " (nothing changed; --apply fixes what it can)");
	if (t.failed)
		printf("wb-tune: %u --apply writes failed\n", t.failed);
	return t.warn ? 1 : 0;
}
