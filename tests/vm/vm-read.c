/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * vm-read: the VM test's ring reader. Prints every event of the module's
 * rings in decode order as wb_event_format lines (the wb-dump format), and
 * exits after --idle-ms without a new event, reporting on stderr:
 *   vm-read: delivered N dropped D published P
 * With --hold it keeps the rings mapped and drains them silently until
 * SIGTERM/SIGINT (the rmmod-under-traffic scenario). With --check-protection
 * it checks that the module refuses every writable mapping but the consumer
 * page's, and mappings that span rings, and prints "protection ok".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <unistd.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/event_text.h"
#include "common/kernel_source.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int expect_refused(int fd, const char *what, size_t len, off_t off, int prot, int err)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p != MAP_FAILED) {
		fprintf(stderr, "vm-read: %s: mapped, should be refused\n", what);
		munmap(p, len);
		return 1;
	}
	if (errno != err) {
		fprintf(stderr, "vm-read: %s: %s, expected %s\n", what, strerror(errno),
			strerror(err));
		return 1;
	}
	return 0;
}

static int check_protection(const char *device)
{
	struct wb_ioc_ring_info ri;
	int fd = open(device ? device : WB_DEVICE_PATH, O_RDWR), bad = 0;
	size_t page = WB_RING_PAGE;
	void *ro;

	if (fd < 0 || ioctl(fd, WB_IOC_RING_INFO, &ri) < 0) {
		perror("vm-read: device");
		return 1;
	}
	bad |= expect_refused(fd, "producer page writable", page, 0, PROT_READ | PROT_WRITE, EPERM);
	bad |= expect_refused(fd, "slots writable", page, 2 * page, PROT_READ | PROT_WRITE, EPERM);
	bad |= expect_refused(fd, "whole ring writable", ri.ring_bytes, 0, PROT_READ | PROT_WRITE,
			      EPERM);
	if (ri.ring_count > 1)
		bad |= expect_refused(fd, "mapping across two rings", 2 * ri.mmap_stride, 0,
				      PROT_READ, EINVAL);
	bad |= expect_refused(fd, "beyond the last ring", page,
			      (off_t)(ri.mmap_stride * ri.ring_count), PROT_READ, EINVAL);
	/* A read-only mapping of the producer page cannot be made writable. */
	ro = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (ro == MAP_FAILED || mprotect(ro, page, PROT_READ | PROT_WRITE) == 0) {
		fprintf(stderr, "vm-read: producer page: read-only mapping %s\n",
			ro == MAP_FAILED ? "refused" : "could be made writable");
		bad = 1;
	}
	if (ro != MAP_FAILED)
		munmap(ro, page);
	/* The consumer page alone may be writable. */
	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)page);
	if (ro == MAP_FAILED) {
		perror("vm-read: consumer page writable");
		bad = 1;
	} else {
		munmap(ro, page);
	}
	close(fd);
	if (!bad)
		printf("protection ok\n");
	return bad;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "idle-ms", required_argument, NULL, 'i' },
		{ "hold", no_argument, NULL, 'H' },
		{ "check-protection", no_argument, NULL, 'P' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wb_kernel_source ks;
	const char *device = NULL;
	char err[256], line[WB_EVENT_TEXT_MAX];
	uint64_t idle_ms = 2000, last;
	int opt, hold = 0, protection = 0;

	while ((opt = getopt_long(argc, argv, "i:Hd:Ph", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			idle_ms = strtoull(optarg, NULL, 10);
			break;
		case 'H':
			hold = 1;
			break;
		case 'd':
			device = optarg;
			break;
		case 'P':
			protection = 1;
			break;
		case 'h':
			printf("usage: vm-read [--idle-ms N | --hold | --check-protection] [--device PATH]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (protection)
		return check_protection(device);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (wb_kernel_source_open(&ks, device, err, sizeof(err))) {
		fprintf(stderr, "vm-read: %s\n", err);
		return 1;
	}
	if (hold)
		fprintf(stderr, "vm-read: holding %u rings\n", ks.ring_count);
	last = now_ms();
	while (!stop) {
		const struct wb_event *ev = wb_kernel_source_next(&ks);

		if (ev) {
			if (!hold) {
				wb_event_format(ev, line, sizeof(line));
				puts(line);
			}
			last = now_ms();
			continue;
		}
		if (!hold && now_ms() - last >= idle_ms)
			break;
		wb_kernel_source_wait(&ks, 50);
	}
	fflush(stdout);
	fprintf(stderr, "vm-read: delivered %" PRIu64 " dropped %" PRIu64 " published %" PRIu64 "\n",
		ks.delivered, wb_kernel_source_dropped(&ks), wb_kernel_source_published(&ks));
	wb_kernel_source_close(&ks);
	return 0;
}
