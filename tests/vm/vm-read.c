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
 * With --check-ioctls it sends malformed requests (nonzero reserved words,
 * unterminated strings, bad pointers, huge capacities, unknown numbers,
 * state changes on a read-only descriptor) and prints "ioctls ok" when
 * each is refused with the right errno. The feed map must not be empty.
 * With --wake-ms N it drains the rings, says "vm-read: blocking" on
 * stderr, sleeps in poll() for at most N ms and, woken with an event,
 * prints "woke after T ms: " and that event, exiting 0; not woken, 1.
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
#include "wirebook/events.h"
#include "wirebook/ring.h"

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

static int expect_errno(int fd, unsigned long cmd, void *arg, int err, const char *what)
{
	if (ioctl(fd, cmd, arg) == 0) {
		fprintf(stderr, "vm-read: ioctl %s: accepted, should fail with %s\n", what,
			strerror(err));
		return 1;
	}
	if (errno != err) {
		fprintf(stderr, "vm-read: ioctl %s: %s, expected %s\n", what, strerror(errno),
			strerror(err));
		return 1;
	}
	return 0;
}

static int check_ioctls(const char *device)
{
	const char *path = device ? device : WB_DEVICE_PATH;
	int fd = open(path, O_RDWR), ro = open(path, O_RDONLY), bad = 0;
	struct wb_ioc_feed f;
	struct wb_ioc_symbol sym;
	struct wb_ioc_list list;
	struct wb_ioc_stats st;

	if (fd < 0 || ro < 0) {
		perror("vm-read: device");
		return 1;
	}
	memset(&f, 0, sizeof(f));
	f.ip = 0x0a000001;
	f.port = 9;
	f.protocol = 1;
	f.venue = 1;
	memcpy(f.name, "X", 2);
	f.reserved = 1;
	bad |= expect_errno(fd, WB_IOC_FEED_ADD, &f, EINVAL, "feed add, reserved set");
	f.reserved = 0;
	memcpy(f.name, "ABCDEFGH", 8);
	bad |= expect_errno(fd, WB_IOC_FEED_ADD, &f, EINVAL, "feed add, name unterminated");
	memcpy(f.name, "X", 2);
	f.protocol = 99;
	bad |= expect_errno(fd, WB_IOC_FEED_ADD, &f, EINVAL, "feed add, protocol 99");
	f.protocol = 1;
	f.venue = 200;
	bad |= expect_errno(fd, WB_IOC_FEED_ADD, &f, EINVAL, "feed add, venue 200");
	f.venue = 1;
	f.port = 0;
	bad |= expect_errno(fd, WB_IOC_FEED_ADD, &f, EINVAL, "feed add, port 0");
	f.port = 9;
	bad |= expect_errno(ro, WB_IOC_FEED_ADD, &f, EBADF, "feed add on a read-only fd");
	bad |= expect_errno(fd, WB_IOC_FEED_DEL, &f, ENOENT, "feed del of an unknown address");
	bad |= expect_errno(fd, WB_IOC_FEED_ADD, (void *)8, EFAULT, "feed add, bad pointer");

	memset(&sym, 'A', sizeof(sym));
	bad |= expect_errno(fd, WB_IOC_SUB_ADD, &sym, EINVAL, "subscribe, ticker unterminated");
	memset(&sym, 0, sizeof(sym));
	bad |= expect_errno(fd, WB_IOC_SUB_ADD, &sym, EINVAL, "subscribe, empty ticker");
	memcpy(sym.ticker, "ABCDEFGHI", 10);
	bad |= expect_errno(fd, WB_IOC_SUB_ADD, &sym, EINVAL, "subscribe, 9 characters");
	memcpy(sym.ticker, "A\001B", 4);
	bad |= expect_errno(fd, WB_IOC_SUB_ADD, &sym, EINVAL, "subscribe, control character");
	memcpy(sym.ticker, "NOSUCH", 7);
	bad |= expect_errno(fd, WB_IOC_SUB_DEL, &sym, ENOENT, "unsubscribe, not subscribed");
	bad |= expect_errno(ro, WB_IOC_SUB_ADD, &sym, EBADF, "subscribe on a read-only fd");
	bad |= expect_errno(ro, WB_IOC_STATS_RESET, NULL, EBADF, "stats reset on a read-only fd");

	memset(&list, 0, sizeof(list));
	list.capacity = 0xffffffffu;
	list.entries = 8;
	bad |= expect_errno(fd, WB_IOC_FEED_LIST, &list, EFAULT, "feed list, bad entries");
	bad |= expect_errno(fd, WB_IOC_SUB_LIST, &list, EFAULT, "symbol list, huge capacity, bad entries");
	memset(&st, 0, sizeof(st));
	st.capacity = 1000;
	st.lines = 8;
	bad |= expect_errno(fd, WB_IOC_STATS, &st, EFAULT, "stats, bad lines");
	/* Capacity 0: only the count comes back. */
	memset(&list, 0, sizeof(list));
	if (ioctl(ro, WB_IOC_FEED_LIST, &list) < 0 || list.count == 0) {
		fprintf(stderr, "vm-read: feed list with capacity 0 should give the count\n");
		bad = 1;
	}
	bad |= expect_errno(fd, _IO(WB_IOC_MAGIC, 200), NULL, ENOTTY, "unknown number");
	bad |= expect_errno(fd, _IOR(WB_IOC_MAGIC, 0, struct wb_ioc_stats), &st, ENOTTY,
			    "known number, wrong size");
	/* The ioctl table: a number without a row, another magic, a known
	 * number with another direction are no command at all. */
	bad |= expect_errno(fd, WB_IOC_RECOVERY_LIST, &list, ENOTTY, "wirebookd's recovery list");
	bad |= expect_errno(fd, _IO(WB_IOC_MAGIC + 1, 9), NULL, ENOTTY, "stats reset's number, other magic");
	bad |= expect_errno(fd, _IOW(WB_IOC_MAGIC, 9, uint64_t), &list, ENOTTY,
			    "stats reset's number, written");
	close(fd);
	close(ro);
	if (!bad)
		printf("ioctls ok\n");
	return bad;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * One wait on empty rings, long enough that only the module's wakeup can
 * end it early: a reader that the first packet does not wake times out.
 */
static int wait_for_wakeup(struct wb_events *evs, int timeout_ms)
{
	const struct wb_event *ev;
	char line[WB_EVENT_TEXT_MAX];
	uint64_t start, waited;
	int ready;

	while (wb_events_peek(evs, &ev, 1))
		wb_events_release(evs);
	fprintf(stderr, "vm-read: blocking\n");
	start = now_ms();
	ready = wb_events_wait(evs, timeout_ms);
	waited = now_ms() - start;
	if (ready <= 0 || !wb_events_peek(evs, &ev, 1)) {
		fprintf(stderr, "vm-read: not woken with an event in %" PRIu64 " ms (wait returned %d)\n",
			waited, ready);
		return 1;
	}
	wb_event_format(ev, line, sizeof(line));
	printf("woke after %" PRIu64 " ms: %s\n", waited, line);
	wb_events_release(evs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "idle-ms", required_argument, NULL, 'i' },
		{ "hold", no_argument, NULL, 'H' },
		{ "check-protection", no_argument, NULL, 'P' },
		{ "check-ioctls", no_argument, NULL, 'I' },
		{ "device", required_argument, NULL, 'd' },
		{ "wake-ms", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wb_events *evs;
	struct wb_event_counts cnt;
	int err;
	const char *device = NULL;
	char line[WB_EVENT_TEXT_MAX];
	uint64_t idle_ms = 2000, last;
	int opt, hold = 0, protection = 0, ioctls = 0, wake_ms = 0;

	while ((opt = getopt_long(argc, argv, "i:Hd:PIw:h", opts, NULL)) != -1) {
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
		case 'I':
			ioctls = 1;
			break;
		case 'w':
			wake_ms = atoi(optarg);
			break;
		case 'h':
			printf("usage: vm-read [--idle-ms N | --hold | --check-protection | --check-ioctls]"
			       " [--wake-ms N] [--device PATH]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (protection)
		return check_protection(device);
	if (ioctls)
		return check_ioctls(device);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	evs = wb_events_open(device, &err);
	if (!evs) {
		fprintf(stderr, "vm-read: %s: %s\n", device ? device : WB_DEVICE_PATH, wb_strerror(err));
		return 1;
	}
	if (wake_ms > 0) {
		err = wait_for_wakeup(evs, wake_ms);
		fflush(stdout);
		wb_events_close(evs);
		return err;
	}
	if (hold)
		fprintf(stderr, "vm-read: holding %u rings\n",
			wb_events_counts(evs, &cnt) == 0 ? cnt.rings : 0);
	last = now_ms();
	while (!stop) {
		const struct wb_event *ev;

		if (wb_events_peek(evs, &ev, 1)) {
			if (!hold) {
				wb_event_format(ev, line, sizeof(line));
				puts(line);
			}
			wb_events_release(evs);
			last = now_ms();
			continue;
		}
		if (!hold && now_ms() - last >= idle_ms)
			break;
		wb_events_wait(evs, 50);
	}
	fflush(stdout);
	wb_events_counts(evs, &cnt);
	fprintf(stderr, "vm-read: delivered %" PRIu64 " dropped %" PRIu64 " published %" PRIu64 "\n",
		cnt.delivered, cnt.dropped, cnt.published);
	wb_events_close(evs);
	return 0;
}
