/* SPDX-License-Identifier: MIT */
/*
 * bench-hw.c - scenario 4 of BENCHMARKS.md: libparambus-hw against the bare
 * ioctls (the limit), libgpiod and sysfs, inside the kernel-test VM.
 *
 * Built by bench/run-hw.py through the kernel harness (tests/kernel/build.py)
 * into two static binaries from this one source:
 *   bench-hw         -DBENCH_GPIOD_V1: every operation; libgpiod 1.6.3 (Debian)
 *   bench-hw-gpiod2  -DBENCH_GPIOD_V2: GPIO set only, against libgpiod 2.x
 * and, without either, by bench/run-java-hw.py into bench-hw-c: every
 * operation without libgpiod, the C side of the Java hardware benchmark.
 * (the two libgpiod versions define the same symbol names, so they cannot
 * share a binary).
 *
 * Every contender of an operation runs BENCH_ITERS iterations per round, for
 * BENCH_ROUNDS rounds; the contenders are interleaved (the order rotates each
 * round), so short blocks keep a host disturbance (qemu is descheduled now
 * and then) from landing on one contender only, and each one's figure is the
 * median of its rounds' ns/op.  Output: diagnostic lines
 *     bench <key> <value>
 * and one "ok"/"not ok" line per operation (the harness protocol).
 * Absolute times under qemu TCG mean nothing: only ratios are reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/spi/spidev.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <parambus/hw/gpio.h>
#include <parambus/hw/i2c.h>
#include <parambus/hw/pwm.h>
#include <parambus/hw/spi.h>

#include "kenv.h"

#if defined(BENCH_GPIOD_V1) || defined(BENCH_GPIOD_V2)
#include <gpiod.h>
#endif

#ifndef BENCH_ROUNDS
#define BENCH_ROUNDS 61
#endif
#define ROUNDS BENCH_ROUNDS
#define MAX_CONTENDERS 4

#ifndef BENCH_ITERS
#define BENCH_ITERS 500
#endif

static long iters = BENCH_ITERS;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One contender: runs one iteration (i = iteration number); returns < 0 on error. */
typedef int (*op_fn)(void *ctx, long i);

struct contender {
	const char *name;
	op_fn fn;
	void *ctx;
	double ns[ROUNDS];
	double median_ns;
	int error;
};

/* Interleaved rounds; fills median_ns.  Returns 0 or the first error. */
static int run_contenders(const char *op, struct contender *c, int n)
{
	for (int k = 0; k < n; k++) /* warm-up */
		for (long i = 0; i < iters / 10 + 1; i++) {
			int r = c[k].fn(c[k].ctx, i);
			if (r < 0) {
				printf("not ok %s: %s failed in warm-up: %s\n", op, c[k].name, strerror(-r));
				return r;
			}
		}
	for (int round = 0; round < ROUNDS; round++)
		for (int j = 0; j < n; j++) {
			struct contender *x = &c[(j + round) % n];
			uint64_t t0 = now_ns();
			for (long i = 0; i < iters; i++) {
				int r = x->fn(x->ctx, i);
				if (r < 0) {
					printf("not ok %s: %s failed: %s\n", op, x->name, strerror(-r));
					return r;
				}
			}
			x->ns[round] = (double)(now_ns() - t0) / (double)iters;
		}
	for (int k = 0; k < n; k++) {
		double tmp[ROUNDS];
		memcpy(tmp, c[k].ns, sizeof(tmp));
		c[k].median_ns = median(tmp, ROUNDS);
		printf("bench ns.%s.%s %.1f\n", op, c[k].name, c[k].median_ns);
		printf("bench rounds.%s.%s", op, c[k].name);
		for (int r = 0; r < ROUNDS; r++)
			printf(" %.1f", c[k].ns[r]);
		printf("\n");
	}
	printf("ok %s\n", op);
	return 0;
}

/* ---- GPIO ------------------------------------------------------------- */

static int raw_request(const char *chip_path, const unsigned int *offsets, unsigned int n, uint64_t flags)
{
	struct gpio_v2_line_request req;
	int fd, r;

	memset(&req, 0, sizeof(req));
	for (unsigned int i = 0; i < n; i++)
		req.offsets[i] = offsets[i];
	req.num_lines = n;
	strcpy(req.consumer, "bench-raw");
	req.config.flags = flags;
	fd = open(chip_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = ioctl(fd, GPIO_V2_GET_LINE_IOCTL, &req);
	r = r < 0 ? -errno : req.fd;
	close(fd);
	return r;
}

static int raw_set(void *ctx, long i)
{
	struct gpio_v2_line_values v = { .bits = (uint64_t)(i & 1), .mask = 1 };

	return ioctl(*(int *)ctx, GPIO_V2_LINE_SET_VALUES_IOCTL, &v) < 0 ? -errno : 0;
}

static int raw_get(void *ctx, long i)
{
	struct gpio_v2_line_values v = { .bits = 0, .mask = 1 };

	(void)i;
	if (ioctl(*(int *)ctx, GPIO_V2_LINE_GET_VALUES_IOCTL, &v) < 0)
		return -errno;
	sink += v.bits;
	return 0;
}

static int pbus_set(void *ctx, long i)
{
	return pbus_gpio_request_set_values(ctx, 1, (uint64_t)(i & 1));
}

static int pbus_get(void *ctx, long i)
{
	uint64_t bits;
	int r;

	(void)i;
	r = pbus_gpio_request_get_values(ctx, 1, &bits);
	sink += bits;
	return r;
}

static int pbus_set8_bulk(void *ctx, long i)
{
	return pbus_gpio_request_set_values(ctx, 0xff, (i & 1) ? 0xff : 0);
}

static int pbus_set8_single(void *ctx, long i)
{
	for (unsigned int k = 0; k < 8; k++) {
		int r = pbus_gpio_request_set_values(ctx, 1ull << k, (i & 1) ? 1ull << k : 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* GPIO through sysfs (CONFIG_GPIO_SYSFS=y in Debian's 6.1): a value fd, pwrite. */
static int sysfs_set(void *ctx, long i)
{
	return pwrite(*(int *)ctx, (i & 1) ? "1" : "0", 1, 0) < 0 ? -errno : 0;
}

/* Export line @offset of the chip labelled @label; return an fd on its value file. */
static int sysfs_gpio_open(const char *label, unsigned int offset)
{
	char p[128], buf[64];
	int base = -1;

	for (int n = 0; n < 1024 && base < 0; n++) {
		snprintf(p, sizeof(p), "/sys/class/gpio/gpiochip%d/label", n);
		if (kenv_read_file(p, buf, sizeof(buf)) < 0)
			continue;
		buf[strcspn(buf, "\n")] = 0;
		if (strcmp(buf, label) == 0)
			base = n;
	}
	if (base < 0)
		return -ENOENT;
	snprintf(buf, sizeof(buf), "%u", (unsigned int)base + offset);
	kenv_write_file("/sys/class/gpio/export", buf);
	snprintf(p, sizeof(p), "/sys/class/gpio/gpio%u/direction", (unsigned int)base + offset);
	for (int t = 0; t < 100 && kenv_write_file(p, "low") < 0; t++)
		usleep(10000);
	snprintf(p, sizeof(p), "/sys/class/gpio/gpio%u/value", (unsigned int)base + offset);
	int fd = open(p, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

#ifdef BENCH_GPIOD_V1
static int gpiod_set(void *ctx, long i)
{
	return gpiod_line_set_value(ctx, (int)(i & 1)) < 0 ? -errno : 0;
}
#endif

#ifdef BENCH_GPIOD_V2
struct gpiod2_ctx {
	struct gpiod_line_request *req;
	unsigned int offset;
};

static int gpiod_set(void *ctx, long i)
{
	struct gpiod2_ctx *g = ctx;

	return gpiod_line_request_set_value(g->req, g->offset,
					    (i & 1) ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) < 0
		       ? -errno : 0;
}
#endif

static struct pbus_gpio_request *pbus_req(struct pbus_gpio_chip *chip, const unsigned int *offsets,
					  size_t n, enum pbus_gpio_direction dir, enum pbus_gpio_edge edge)
{
	struct pbus_gpio_line_settings s[8];
	struct pbus_gpio_request *req = NULL;
	int r;

	memset(s, 0, sizeof(s));
	for (size_t i = 0; i < n; i++) {
		s[i].direction = dir;
		s[i].edge = edge;
	}
	r = pbus_gpio_request_lines(chip, NULL, offsets, s, n, &req);
	if (r < 0)
		printf("# pbus_gpio_request_lines: %s\n", strerror(-r));
	return req;
}

static void bench_gpio(int all)
{
	char chip_path[64];
	struct pbus_gpio_chip *chip = NULL;
	static const unsigned int o_pset = 0, o_rset = 1, o_pget = 3, o_rget = 4, o_sset = 6;
#if defined(BENCH_GPIOD_V1) || defined(BENCH_GPIOD_V2)
	static const unsigned int o_gset = 2;
#endif
	static int sfd;
	static const unsigned int o8[8] = { 8, 9, 10, 11, 12, 13, 14, 15 };
	struct pbus_gpio_request *pset, *pget, *p8;
	int rset, rget;

	if (kenv_gpiochip_by_label("pbus-sim0", chip_path, sizeof(chip_path)) < 0 ||
	    pbus_gpio_chip_open(chip_path, &chip) < 0) {
		printf("not ok gpio: cannot open pbus-sim0\n");
		return;
	}
	pset = pbus_req(chip, &o_pset, 1, PBUS_GPIO_DIRECTION_OUTPUT, PBUS_GPIO_EDGE_NONE);
	pget = pbus_req(chip, &o_pget, 1, PBUS_GPIO_DIRECTION_INPUT, PBUS_GPIO_EDGE_NONE);
	p8 = pbus_req(chip, o8, 8, PBUS_GPIO_DIRECTION_OUTPUT, PBUS_GPIO_EDGE_NONE);
	rset = raw_request(chip_path, &o_rset, 1, GPIO_V2_LINE_FLAG_OUTPUT);
	rget = raw_request(chip_path, &o_rget, 1, GPIO_V2_LINE_FLAG_INPUT);
	if (!pset || !pget || !p8 || rset < 0 || rget < 0) {
		printf("not ok gpio: request failed\n");
		return;
	}

#if defined(BENCH_GPIOD_V1)
	struct gpiod_chip *gchip = gpiod_chip_open(chip_path);
	struct gpiod_line *gline = gchip ? gpiod_chip_get_line(gchip, o_gset) : NULL;
	if (!gline || gpiod_line_request_output(gline, "bench-gpiod1", 0) < 0) {
		printf("not ok gpio/set: libgpiod v1 request: %s\n", strerror(errno));
		return;
	}
	printf("bench libgpiod_version %s\n", gpiod_version_string());
	void *gctx = gline;
#elif defined(BENCH_GPIOD_V2)
	struct gpiod_chip *gchip = gpiod_chip_open(chip_path);
	struct gpiod_line_settings *gs = gpiod_line_settings_new();
	struct gpiod_line_config *gc = gpiod_line_config_new();
	static struct gpiod2_ctx g2;
	g2.offset = o_gset;
	if (!gchip || !gs || !gc ||
	    gpiod_line_settings_set_direction(gs, GPIOD_LINE_DIRECTION_OUTPUT) < 0 ||
	    gpiod_line_config_add_line_settings(gc, &o_gset, 1, gs) < 0 ||
	    !(g2.req = gpiod_chip_request_lines(gchip, NULL, gc))) {
		printf("not ok gpio/set: libgpiod v2 request: %s\n", strerror(errno));
		return;
	}
	printf("bench libgpiod_version %s\n", gpiod_api_version());
	void *gctx = &g2;
#endif

	sfd = all ? sysfs_gpio_open("pbus-sim0", o_sset) : -1;
	if (all && sfd < 0)
		printf("# gpio sysfs unavailable: %s\n", strerror(-sfd));
	struct contender set[] = {
		{ .name = "raw_ioctl", .fn = raw_set, .ctx = &rset },
		{ .name = "parambus", .fn = pbus_set, .ctx = pset },
#if defined(BENCH_GPIOD_V1) || defined(BENCH_GPIOD_V2)
		{ .name = "libgpiod", .fn = gpiod_set, .ctx = gctx },
#endif
		{ .name = "sysfs", .fn = sysfs_set, .ctx = &sfd },
	};
	int nset = (int)(sizeof(set) / sizeof(set[0])) - (sfd < 0);
	run_contenders("gpio_set", set, nset);

	if (all) {
		struct contender get[] = {
			{ .name = "raw_ioctl", .fn = raw_get, .ctx = &rget },
			{ .name = "parambus", .fn = pbus_get, .ctx = pget },
		};
		run_contenders("gpio_get", get, 2);

		struct contender b8[] = {
			{ .name = "bulk8", .fn = pbus_set8_bulk, .ctx = p8 },
			{ .name = "single8", .fn = pbus_set8_single, .ctx = p8 },
		};
		run_contenders("gpio_8lines", b8, 2);
	}
}

#ifndef BENCH_GPIOD_V2 /* the libgpiod 2 binary measures GPIO set only */

/* ---- edge round trip: gpio-sim pull -> event read ------------------------ */

static void bench_edge(void)
{
	char chip_path[64], pull_path[128];
	struct pbus_gpio_chip *chip = NULL;
	struct pbus_gpio_request *req;
	static const unsigned int off = 5;
	enum { N = 400 };
	static double us[N];
	int pfd;

	if (kenv_gpiochip_by_label("pbus-sim0", chip_path, sizeof(chip_path)) < 0 ||
	    pbus_gpio_chip_open(chip_path, &chip) < 0) {
		printf("not ok edge: cannot open pbus-sim0\n");
		return;
	}
	req = pbus_req(chip, &off, 1, PBUS_GPIO_DIRECTION_INPUT, PBUS_GPIO_EDGE_BOTH);
	snprintf(pull_path, sizeof(pull_path), "/run/pbus/sim/pbus-sim0/sim_gpio%u/pull", off);
	pfd = open(pull_path, O_WRONLY | O_CLOEXEC);
	if (!req || pfd < 0) {
		printf("not ok edge: setup failed (%s)\n", strerror(errno));
		return;
	}
	for (int i = 0; i < N + 20; i++) {
		const char *v = (i & 1) ? "pull-down" : "pull-up";
		struct pbus_gpio_edge_event ev;
		uint64_t t0 = now_ns();
		if (pwrite(pfd, v, strlen(v), 0) < 0) {
			printf("not ok edge: write pull: %s\n", strerror(errno));
			return;
		}
		int r = pbus_gpio_request_read_events(req, &ev, 1);
		uint64_t t1 = now_ns();
		if (r != 1) {
			printf("not ok edge: read_events returned %d\n", r);
			return;
		}
		if (i >= 20)
			us[i - 20] = (double)(t1 - t0) / 1000.0;
	}
	double mean = 0, var = 0;
	for (int i = 0; i < N; i++)
		mean += us[i];
	mean /= N;
	for (int i = 0; i < N; i++)
		var += (us[i] - mean) * (us[i] - mean);
	qsort(us, N, sizeof(us[0]), cmp_double);
	printf("bench edge_roundtrip_median_us %.1f\n", us[N / 2]);
	printf("bench edge_roundtrip_p99_us %.1f\n", us[(N * 99) / 100]);
	printf("bench edge_roundtrip_mean_us %.1f\n", mean);
	printf("bench edge_roundtrip_stdev_us %.1f\n", __builtin_sqrt(var / (N - 1)));
	printf("bench edge_roundtrip_n %d\n", N);
	printf("ok edge_roundtrip\n");
	close(pfd);
	pbus_gpio_request_release(req);
	pbus_gpio_chip_close(chip);
}

/* ---- SPI ------------------------------------------------------------------ */

#define SPI_LEN 24

struct raw_spi {
	int fd;
	struct spi_ioc_transfer tr;
	uint8_t tx[SPI_LEN], rx[SPI_LEN];
};

static int spi_raw(void *ctx, long i)
{
	struct raw_spi *s = ctx;

	s->tx[0] = (uint8_t)i;
	if (ioctl(s->fd, SPI_IOC_MESSAGE(1), &s->tr) < 0)
		return -errno;
	sink += s->rx[0];
	return 0;
}

static int spi_prepared(void *ctx, long i)
{
	struct pbus_spi_message *m = ctx;
	uint8_t *tx = pbus_spi_message_tx(m, 0);
	int r;

	tx[0] = (uint8_t)i;
	r = pbus_spi_message_run(m);
	sink += ((const uint8_t *)pbus_spi_message_rx(m, 0))[0];
	return r;
}

/* What a naive per-call wrapper does: build and allocate everything each call. */
static int naive_spi_transfer(int fd, const uint8_t *tx, uint8_t *rx, size_t len)
{
	struct spi_ioc_transfer *tr = calloc(1, sizeof(*tr));
	uint8_t *txb = malloc(len), *rxb = malloc(len);
	int r = 0;

	if (!tr || !txb || !rxb) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(txb, tx, len);
	tr->tx_buf = (uintptr_t)txb;
	tr->rx_buf = (uintptr_t)rxb;
	tr->len = (uint32_t)len;
	if (ioctl(fd, SPI_IOC_MESSAGE(1), tr) < 0)
		r = -errno;
	else
		memcpy(rx, rxb, len);
out:
	free(tr);
	free(txb);
	free(rxb);
	return r;
}

static int spi_per_call(void *ctx, long i)
{
	struct raw_spi *s = ctx;
	int r;

	s->tx[0] = (uint8_t)i;
	r = naive_spi_transfer(s->fd, s->tx, s->rx, SPI_LEN);
	sink += s->rx[0];
	return r;
}

static void bench_spi(void)
{
	static struct raw_spi raw, naive;
	struct pbus_spi *spi = NULL;
	struct pbus_spi_message *m = NULL;
	struct pbus_spi_message_transfer mt;
	int r;

	memset(&mt, 0, sizeof(mt));
	mt.length = SPI_LEN;
	mt.flags = PBUS_SPI_MESSAGE_TX | PBUS_SPI_MESSAGE_RX;
	r = pbus_spi_open("/dev/spidev0.0", &spi);
	if (r == 0)
		r = pbus_spi_message_new(spi, &mt, 1, &m);
	raw.fd = open("/dev/spidev0.0", O_RDWR | O_CLOEXEC);
	naive.fd = raw.fd;
	if (r < 0 || raw.fd < 0) {
		printf("not ok spi: setup: %s\n", strerror(r < 0 ? -r : errno));
		return;
	}
	for (int i = 0; i < SPI_LEN; i++)
		raw.tx[i] = naive.tx[i] = (uint8_t)(0xa0 + i);
	memcpy(pbus_spi_message_tx(m, 0), raw.tx, SPI_LEN);
	raw.tr.tx_buf = (uintptr_t)raw.tx;
	raw.tr.rx_buf = (uintptr_t)raw.rx;
	raw.tr.len = SPI_LEN;

	struct contender c[] = {
		{ .name = "raw_ioctl", .fn = spi_raw, .ctx = &raw },
		{ .name = "prepared", .fn = spi_prepared, .ctx = m },
		{ .name = "per_call", .fn = spi_per_call, .ctx = &naive },
	};
	run_contenders("spi_24b", c, 3);
	pbus_spi_message_free(m);
	pbus_spi_close(spi);
	close(raw.fd);
}

/* ---- SMBus read byte on i2c-stub 0x50 -------------------------------------- */

static int smbus_raw(void *ctx, long i)
{
	union i2c_smbus_data d;
	struct i2c_smbus_ioctl_data a = { .read_write = I2C_SMBUS_READ, .command = 0,
					  .size = I2C_SMBUS_BYTE, .data = &d };

	(void)i;
	if (ioctl(*(int *)ctx, I2C_SMBUS, &a) < 0)
		return -errno;
	sink += d.byte;
	return 0;
}

static int smbus_pbus(void *ctx, long i)
{
	int r = pbus_i2c_smbus_read_byte(ctx);

	(void)i;
	if (r >= 0)
		sink += (unsigned int)r;
	return r < 0 ? r : 0;
}

static void bench_smbus(void)
{
	char path[64];
	struct pbus_i2c *i2c = NULL;
	static int fd;
	int bus = kenv_i2c_bus_by_name("SMBus stub driver"), r;

	if (bus < 0) {
		printf("not ok smbus: no i2c-stub\n");
		return;
	}
	snprintf(path, sizeof(path), "/dev/i2c-%d", bus);
	r = pbus_i2c_open(path, &i2c);
	if (r == 0)
		r = pbus_i2c_set_address(i2c, 0x50, 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (r < 0 || fd < 0 || ioctl(fd, I2C_SLAVE, 0x50) < 0) {
		printf("not ok smbus: setup: %s\n", strerror(r < 0 ? -r : errno));
		return;
	}
	struct contender c[] = {
		{ .name = "raw_ioctl", .fn = smbus_raw, .ctx = &fd },
		{ .name = "parambus", .fn = smbus_pbus, .ctx = i2c },
	};
	run_contenders("smbus_byte", c, 2);
	pbus_i2c_close(i2c);
	close(fd);
}

/* ---- PWM duty cycle: sysfs by hand vs pbus_pwm_set_duty_cycle -------------- */

struct sysfs_pwm {
	int fd;
};

static int pwm_sysfs(void *ctx, long i)
{
	struct sysfs_pwm *p = ctx;
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%ld", 100000 + (i & 1) * 1000);

	return pwrite(p->fd, buf, (size_t)n, 0) < 0 ? -errno : 0;
}

static int pwm_pbus(void *ctx, long i)
{
	return pbus_pwm_set_duty_cycle(ctx, 100000 + (uint64_t)(i & 1) * 1000);
}

static void bench_pwm(void)
{
	char chip[128], p[192];
	static struct sysfs_pwm raw;
	struct pbus_pwm *pwm = NULL;
	unsigned int n;
	int r;

	if (kenv_pwmchip_path(chip, sizeof(chip)) < 0 || sscanf(strrchr(chip, '/') + 1, "pwmchip%u", &n) != 1) {
		printf("not ok pwm: no mock pwm chip\n");
		return;
	}
	r = pbus_pwm_open(n, 0, 0, 0, &pwm);
	if (r == 0)
		r = pbus_pwm_set_period(pwm, 1000000);
	snprintf(p, sizeof(p), "%s/export", chip);
	kenv_write_file(p, "1");
	for (int t = 0; t < 200; t++) { /* the udev-export race, by hand */
		snprintf(p, sizeof(p), "%s/pwm1/period", chip);
		if (kenv_write_file(p, "1000000") == 0)
			break;
		usleep(10000);
	}
	snprintf(p, sizeof(p), "%s/pwm1/duty_cycle", chip);
	raw.fd = open(p, O_WRONLY | O_CLOEXEC);
	if (r < 0 || raw.fd < 0) {
		printf("not ok pwm: setup: %s\n", strerror(r < 0 ? -r : errno));
		return;
	}
	struct contender c[] = {
		{ .name = "sysfs_write", .fn = pwm_sysfs, .ctx = &raw },
		{ .name = "parambus", .fn = pwm_pbus, .ctx = pwm },
	};
	long saved = iters;
	iters = iters / 4 + 1;
	run_contenders("pwm_duty", c, 2);
	iters = saved;
	close(raw.fd);
	pbus_pwm_close(pwm);
}
#endif /* !BENCH_GPIOD_V2 */

int main(int argc, char **argv)
{
	struct utsname u;
	setvbuf(stdout, NULL, _IOLBF, 0);
	(void)argc;
	(void)argv;
	uname(&u);
	printf("bench kernel %s\n", u.release);
	printf("bench iters %ld\n", iters);
	printf("bench rounds %d\n", ROUNDS);
#ifdef BENCH_GPIOD_V2
	bench_gpio(0);
#else
	bench_gpio(1);
	bench_spi();
	bench_smbus();
	bench_edge();
	bench_pwm();
#endif
	return 0;
}
