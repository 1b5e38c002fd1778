/*
 * test-harness-env: the kernel test environment checks itself.
 *
 * Runs first in every VM run and checks that every device and file that
 * tests/kernel/ENVIRONMENT.md promises is there and behaves as documented,
 * using the raw kernel interfaces only (no libparambus-hw), so that a broken
 * environment is reported as such instead of as failures of the library.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/spi/spidev.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "kenv.h"

static char why[512];
static int failures;

/* Record the first failure reason of a case and return -1. */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

#define CHECK(cond, ...) do { if (!(cond)) return fail(__VA_ARGS__); } while (0)

static void run(const char *name, int (*fn)(void))
{
	why[0] = 0;
	if (fn() == 0)
		kenv_ok(name);
	else {
		kenv_fail(name, "%s", why);
		failures++;
	}
}

/* ---- GPIO ------------------------------------------------------------- */

/* tracefs under debugfs with gpiolib's events, and the sysfs GPIO class (each
 * chip's global base): the Java GPIO tests watch output levels with the
 * gpio_value trace event, which names lines by global number. */
static int t_gpio_trace_and_sysfs(void)
{
	static const char *const labels[] = {"pbus-sim0", "pbus-sim1"};

	CHECK(access("/sys/kernel/debug/tracing/events/gpio/gpio_value/enable", W_OK) == 0,
	      "no writable tracing/events/gpio/gpio_value/enable: %s", strerror(errno));
	for (size_t k = 0; k < 2; k++) {
		DIR *d = opendir("/sys/class/gpio");
		struct dirent *e;
		int found = 0;

		CHECK(d != NULL, "/sys/class/gpio: %s", strerror(errno));
		while (!found && (e = readdir(d)) != NULL) {
			char p[300], label[64], base[16];

			if (strncmp(e->d_name, "gpiochip", 8) != 0)
				continue;
			snprintf(p, sizeof(p), "/sys/class/gpio/%s/label", e->d_name);
			if (kenv_read_file(p, label, sizeof(label)) < 0)
				continue;
			label[strcspn(label, "\n")] = 0;
			snprintf(p, sizeof(p), "/sys/class/gpio/%s/base", e->d_name);
			found = !strcmp(label, labels[k]) && kenv_read_file(p, base, sizeof(base)) > 0;
		}
		closedir(d);
		CHECK(found, "no /sys/class/gpio/gpiochip* labelled %s with a base", labels[k]);
	}
	return 0;
}

static int check_chip(const char *label, unsigned int lines, char prefix)
{
	struct gpiochip_info info;
	char path[64];
	int fd, ret = kenv_gpiochip_by_label(label, path, sizeof(path));

	CHECK(ret == 0, "no gpiochip labelled %s: %s", label, strerror(-ret));
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	memset(&info, 0, sizeof(info));
	CHECK(ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, &info) == 0, "CHIPINFO: %s", strerror(errno));
	if (info.lines != lines) {
		close(fd);
		return fail("%s has %u lines, expected %u", label, info.lines, lines);
	}
	for (unsigned int i = 0; i < lines; i++) {
		struct gpio_v2_line_info li;
		char want[16];

		memset(&li, 0, sizeof(li));
		li.offset = i;
		snprintf(want, sizeof(want), "%c%u", prefix, i);
		if (ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &li) != 0 || strcmp(li.name, want) ||
		    (li.flags & GPIO_V2_LINE_FLAG_USED)) {
			close(fd);
			return fail("%s line %u: name '%s' flags 0x%llx, expected free '%s'", label, i,
				    li.name, (unsigned long long)li.flags, want);
		}
	}
	close(fd);
	return 0;
}

static int t_gpio_sim0(void) { return check_chip("pbus-sim0", 16, 'A'); }
static int t_gpio_sim1(void) { return check_chip("pbus-sim1", 8, 'B'); }

static int request_line(const char *label, unsigned int offset, uint64_t flags, int value)
{
	struct gpio_v2_line_request req;
	char path[64];
	int fd, ret;

	if ((ret = kenv_gpiochip_by_label(label, path, sizeof(path))) < 0)
		return ret;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.offsets[0] = offset;
	req.num_lines = 1;
	req.config.flags = flags;
	if (value >= 0) {
		req.config.num_attrs = 1;
		req.config.attrs[0].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
		req.config.attrs[0].attr.values = (uint64_t)value;
		req.config.attrs[0].mask = 1;
	}
	strcpy(req.consumer, "harness-env");
	ret = ioctl(fd, GPIO_V2_GET_LINE_IOCTL, &req);
	ret = ret < 0 ? -errno : req.fd;
	close(fd);
	return ret;
}

static int line_get(int lfd)
{
	struct gpio_v2_line_values v = { .mask = 1 };

	if (ioctl(lfd, GPIO_V2_LINE_GET_VALUES_IOCTL, &v) < 0)
		return -errno;
	return (int)(v.bits & 1);
}

static int t_gpio_sim_input_and_edge(void)
{
	struct gpio_v2_line_event ev;
	struct pollfd p;
	int lfd = request_line("pbus-sim0", 3, GPIO_V2_LINE_FLAG_INPUT |
			       GPIO_V2_LINE_FLAG_EDGE_RISING, -1), v, ret = 0;

	CHECK(lfd >= 0, "request A3 as input: %s", strerror(-lfd));
	if ((v = line_get(lfd)) != 0)
		ret = fail("A3 reads %d at pull-down", v);
	else if ((v = kenv_sim_set_pull("pbus-sim0", 3, 1)) < 0)
		ret = fail("set pull-up: %s", strerror(-v));
	else if ((v = line_get(lfd)) != 1)
		ret = fail("A3 reads %d after pull-up", v);
	if (!ret) {
		p.fd = lfd;
		p.events = POLLIN;
		if (poll(&p, 1, 2000) != 1)
			ret = fail("no edge event within 2 s after pull-up (irq_sim)");
		else if (read(lfd, &ev, sizeof(ev)) != sizeof(ev))
			ret = fail("event read: %s", strerror(errno));
		else if (ev.id != GPIO_V2_LINE_EVENT_RISING_EDGE || ev.offset != 3 || ev.seqno != 1)
			ret = fail("event id %u offset %u seqno %u", ev.id, ev.offset, ev.seqno);
	}
	kenv_sim_set_pull("pbus-sim0", 3, 0);
	close(lfd);
	return ret;
}

static int t_gpio_sim_output(void)
{
	int lfd = request_line("pbus-sim1", 2, GPIO_V2_LINE_FLAG_OUTPUT, 1), v;

	CHECK(lfd >= 0, "request B2 as output high: %s", strerror(-lfd));
	v = kenv_sim_get_value("pbus-sim1", 2);
	close(lfd);
	CHECK(v == 1, "sim value of B2 is %d, expected 1", v);
	return 0;
}

static int t_gpio_hte_absent(void)
{
	int lfd = request_line("pbus-sim0", 4, GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_EDGE_RISING |
			       GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE, -1);

	if (lfd >= 0)
		close(lfd);
	CHECK(lfd == -EOPNOTSUPP, "HTE request gave %s, expected EOPNOTSUPP",
	      lfd >= 0 ? "success" : strerror(-lfd));
	return 0;
}

static int t_gpio_sim_remove(void)
{
	int lfd = request_line("pbus-sim1", 0, GPIO_V2_LINE_FLAG_INPUT, -1), r, e;

	CHECK(lfd >= 0, "request B0: %s", strerror(-lfd));
	r = kenv_sim_set_live("pbus-sim1", 0);
	if (r < 0) {
		close(lfd);
		return fail("live=0: %s", strerror(-r));
	}
	r = line_get(lfd);
	e = kenv_sim_set_live("pbus-sim1", 1);
	close(lfd);
	CHECK(r == -ENODEV, "GET_VALUES on a removed chip gave %s, expected ENODEV",
	      r >= 0 ? "a value" : strerror(-r));
	CHECK(e == 0, "live=1 again: %s", strerror(-e));
	return 0;
}

/* ---- I2C -------------------------------------------------------------- */

static int open_i2c(const char *name, int *fd)
{
	char path[32];
	int n = kenv_i2c_bus_by_name(name);

	CHECK(n >= 0, "no i2c adapter named '%s'", name);
	snprintf(path, sizeof(path), "/dev/i2c-%d", n);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(*fd >= 0, "open %s: %s", path, strerror(errno));
	return 0;
}

static int smbus(int fd, char rw, uint8_t cmd, int size, union i2c_smbus_data *d)
{
	struct i2c_smbus_ioctl_data a = { .read_write = rw, .command = cmd, .size = size, .data = d };

	return ioctl(fd, I2C_SMBUS, &a) < 0 ? -errno : 0;
}

static int t_i2c_stub(void)
{
	union i2c_smbus_data d;
	unsigned long funcs = 0;
	int fd, r;

	if (open_i2c("SMBus stub driver", &fd))
		return -1;
	r = ioctl(fd, I2C_FUNCS, &funcs);
	if (r < 0 || funcs != 0x0c7f0000) {
		close(fd);
		return fail("I2C_FUNCS 0x%lx, expected 0x0c7f0000", funcs);
	}
	ioctl(fd, I2C_SLAVE, 0x50);
	d.byte = 0x5a;
	r = smbus(fd, I2C_SMBUS_WRITE, 0x07, I2C_SMBUS_BYTE_DATA, &d);
	d.byte = 0;
	if (!r)
		r = smbus(fd, I2C_SMBUS_READ, 0x07, I2C_SMBUS_BYTE_DATA, &d);
	if (r || d.byte != 0x5a) {
		close(fd);
		return fail("byte-data round trip at 0x50: %s, read 0x%02x", strerror(-r), d.byte);
	}
	ioctl(fd, I2C_SLAVE, 0x51);
	r = smbus(fd, I2C_SMBUS_READ, 0x00, I2C_SMBUS_BYTE_DATA, &d);
	close(fd);
	/* i2c-stub reports an absent chip as ENODEV (the mock adapter: ENXIO). */
	CHECK(r == -ENODEV, "read at absent 0x51 gave %s, expected ENODEV", r ? strerror(-r) : "success");
	return 0;
}

static int debugfs_has(const char *path, const char *needle)
{
	static char buf[1 << 16];
	int r = kenv_read_file(path, buf, sizeof(buf));

	if (r < 0)
		return fail("read %s: %s", path, strerror(-r));
	if (!strstr(buf, needle))
		return fail("%s lacks '%s'; it says: %.200s", path, needle, buf);
	return 0;
}

#define I2CDBG "/sys/kernel/debug/pbus-mock-i2c/"

static int t_i2c_mock_rdwr(void)
{
	uint8_t reg = 0x10, in[2] = { 0, 0 };
	struct i2c_msg m[2] = {
		{ .addr = 0x48, .flags = 0, .len = 1, .buf = &reg },
		{ .addr = 0x48, .flags = I2C_M_RD, .len = 2, .buf = in },
	};
	struct i2c_rdwr_ioctl_data x = { .msgs = m, .nmsgs = 2 };
	unsigned long funcs = 0;
	int fd, r;

	if (open_i2c("pbus-mock-i2c", &fd))
		return -1;
	ioctl(fd, I2C_FUNCS, &funcs);
	if (funcs != 0x0fff800b) {
		close(fd);
		return fail("I2C_FUNCS 0x%lx, expected 0x0fff800b", funcs);
	}
	r = ioctl(fd, I2C_RDWR, &x);
	close(fd);
	CHECK(r == 2, "I2C_RDWR: %s", r < 0 ? strerror(errno) : "short");
	CHECK(in[0] == 0x10 && in[1] == 0x11, "read %02x %02x, expected 10 11", in[0], in[1]);
	if (debugfs_has(I2CDBG "last_xfer", "kind=i2c ret=2 nmsgs=2\n"
			"msg=0 addr=0x48 flags=0x0000 len=1 data=10\n"
			"msg=1 addr=0x48 flags=0x0001 len=2 data=10 11\n"))
		return -1;
	return 0;
}

static int t_i2c_mock_pec_block_10bit(void)
{
	union i2c_smbus_data d;
	int fd, r;

	if (open_i2c("pbus-mock-i2c", &fd))
		return -1;
	/* PEC byte-data write and read at 0x49. */
	ioctl(fd, I2C_SLAVE, 0x49);
	ioctl(fd, I2C_PEC, 1);
	d.byte = 0xab;
	r = smbus(fd, I2C_SMBUS_WRITE, 0x20, I2C_SMBUS_BYTE_DATA, &d);
	if (r) {
		close(fd);
		return fail("PEC write: %s", strerror(-r));
	}
	/* PEC over 0x92 0x20 0xab, polynomial 0x07. */
	if (debugfs_has(I2CDBG "last_xfer", "pec=1\nmsg=0 addr=0x49 flags=0x0000 len=3 data=20 ab")) {
		close(fd);
		return -1;
	}
	d.byte = 0;
	r = smbus(fd, I2C_SMBUS_READ, 0x20, I2C_SMBUS_BYTE_DATA, &d);
	if (r || d.byte != 0xab) {
		close(fd);
		return fail("PEC read: %s, 0x%02x", strerror(-r), d.byte);
	}
	kenv_write_file(I2CDBG "fault", "bad-pec");
	r = smbus(fd, I2C_SMBUS_READ, 0x20, I2C_SMBUS_BYTE_DATA, &d);
	kenv_write_file(I2CDBG "fault", "none");
	if (r != -EBADMSG) {
		close(fd);
		return fail("bad PEC gave %s, expected EBADMSG", r ? strerror(-r) : "success");
	}
	/* SMBus block write + read (with PEC). */
	d.block[0] = 3;
	d.block[1] = 1, d.block[2] = 2, d.block[3] = 3;
	r = smbus(fd, I2C_SMBUS_WRITE, 0x40, I2C_SMBUS_BLOCK_DATA, &d);
	memset(&d, 0, sizeof(d));
	if (!r)
		r = smbus(fd, I2C_SMBUS_READ, 0x40, I2C_SMBUS_BLOCK_DATA, &d);
	if (r || d.block[0] != 3 || d.block[1] != 1 || d.block[3] != 3) {
		close(fd);
		return fail("block round trip: %s, count %u", strerror(-r), d.block[0]);
	}
	ioctl(fd, I2C_PEC, 0);
	/* 10-bit device. */
	r = ioctl(fd, I2C_TENBIT, 1);
	if (!r)
		r = ioctl(fd, I2C_SLAVE, 0x2a5);
	if (r) {
		close(fd);
		return fail("10-bit address 0x2a5: %s", strerror(errno));
	}
	r = smbus(fd, I2C_SMBUS_READ, 0x33, I2C_SMBUS_BYTE_DATA, &d);
	if (r || d.byte != 0x33) {
		close(fd);
		return fail("10-bit read: %s, 0x%02x", strerror(-r), d.byte);
	}
	ioctl(fd, I2C_TENBIT, 0);
	ioctl(fd, I2C_SLAVE, 0x30);
	r = smbus(fd, I2C_SMBUS_READ, 0x00, I2C_SMBUS_BYTE_DATA, &d);
	close(fd);
	CHECK(r == -ENXIO, "absent 0x30 gave %s, expected ENXIO", r ? strerror(-r) : "success");
	return 0;
}

static int t_i2c_mock_present(void)
{
	union i2c_smbus_data d;
	int fd, r;

	if (open_i2c("pbus-mock-i2c", &fd))
		return -1;
	ioctl(fd, I2C_SLAVE, 0x48);
	kenv_write_file(I2CDBG "0x48/present", "0");
	r = smbus(fd, I2C_SMBUS_READ, 0x00, I2C_SMBUS_BYTE_DATA, &d);
	kenv_write_file(I2CDBG "0x48/present", "1");
	close(fd);
	CHECK(r == -ENXIO, "unplugged 0x48 gave %s, expected ENXIO", r ? strerror(-r) : "success");
	return debugfs_has(I2CDBG "0x48/regs", "10: 10 11 12 13");
}

/*
 * The documented way to remove the I2C adapter while a /dev/i2c-N is open:
 * the unbind blocks until the last user closes, so a child does it, and the
 * child must not itself hold the inherited fd (it would wait for itself).
 */
static int t_i2c_mock_unbind_while_open(void)
{
	const char *drv = "/sys/bus/platform/drivers/pbus-mock-i2c";
	int fd, status = 0, done = 0, r;
	char node[32];
	pid_t pid;

	if (open_i2c("pbus-mock-i2c", &fd))
		return -1;
	snprintf(node, sizeof(node), "/dev/i2c-%d", kenv_i2c_bus_by_name("pbus-mock-i2c"));
	pid = fork();
	if (pid == 0) {
		close(fd);
		_exit(kenv_unbind(drv, "pbus-mock-i2c.0") == 0 ? 0 : 1);
	}
	usleep(300000);
	r = waitpid(pid, &status, WNOHANG);
	{
		union i2c_smbus_data d;
		int x;

		ioctl(fd, I2C_SLAVE, 0x48);
		x = smbus(fd, I2C_SMBUS_READ, 0x05, I2C_SMBUS_BYTE_DATA, &d);
		printf("# during the pending unbind: %s %s, SMBus read on the open fd: %s\n", node,
		       access(node, F_OK) == 0 ? "exists" : "is gone", x ? strerror(-x) : "works");
	}
	close(fd);
	for (int i = 0; i < 50 && !done; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
		else
			usleep(100000);
	}
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return fail("unbind did not complete within 5 s of the last close");
	}
	CHECK(r == 0, "unbind returned while the fd was still open (expected it to wait)");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unbind failed");
	CHECK(kenv_i2c_bus_by_name("pbus-mock-i2c") < 0, "adapter still listed after unbind");
	r = kenv_bind(drv, "pbus-mock-i2c.0");
	CHECK(r == 0, "bind again: %s", strerror(-r));
	CHECK(kenv_i2c_bus_by_name("pbus-mock-i2c") >= 0, "adapter not back after bind");
	return 0;
}

/* ---- SPI -------------------------------------------------------------- */

static int spi_cs(const char *node, unsigned int cs)
{
	uint8_t tx[3] = { 0x0a, 0x0b, 0x0c }, rx[3] = { 0 };
	struct spi_ioc_transfer t = {
		.tx_buf = (uintptr_t)tx, .rx_buf = (uintptr_t)rx, .len = 3,
		.speed_hz = 500000, .bits_per_word = 8, .delay_usecs = 10,
	};
	uint32_t mode = SPI_MODE_3 | SPI_TX_QUAD, back = 0;
	char needle[160];
	int fd = open(node, O_RDWR | O_CLOEXEC), r;

	CHECK(fd >= 0, "open %s: %s", node, strerror(errno));
	r = ioctl(fd, SPI_IOC_WR_MODE32, &mode);
	if (!r)
		r = ioctl(fd, SPI_IOC_RD_MODE32, &back);
	if (r || back != mode) {
		close(fd);
		return fail("MODE32 0x%x: %s, read back 0x%x", mode, strerror(errno), back);
	}
	mode = SPI_READY;
	r = ioctl(fd, SPI_IOC_WR_MODE32, &mode);
	if (r == 0 || errno != EINVAL) {
		close(fd);
		return fail("SPI_READY accepted, expected EINVAL");
	}
	r = ioctl(fd, SPI_IOC_MESSAGE(1), &t);
	close(fd);
	CHECK(r == 3, "SPI_IOC_MESSAGE(1): %s", r < 0 ? strerror(errno) : "short");
	CHECK(!memcmp(tx, rx, 3), "loopback: rx %02x %02x %02x", rx[0], rx[1], rx[2]);
	snprintf(needle, sizeof(needle), "cs=%u mode=0x%08x max_speed=10000000 speed=500000 bpw=8 len=3 "
		 "tx_nbits=1 rx_nbits=1 cs_change=0 delay=10us", cs, SPI_MODE_3 | SPI_TX_QUAD);
	return debugfs_has("/sys/kernel/debug/pbus-mock-spi/last_message", needle);
}

static int t_spidev0(void) { return spi_cs("/dev/spidev0.0", 0); }
static int t_spidev1(void) { return spi_cs("/dev/spidev0.1", 1); }

static int t_spidev_remove(void)
{
	uint8_t mode = 0;
	int fd = open("/dev/spidev0.1", O_RDWR | O_CLOEXEC), r, e;

	CHECK(fd >= 0, "open: %s", strerror(errno));
	r = kenv_unbind("/sys/bus/spi/drivers/spidev", "spi0.1");
	if (r) {
		close(fd);
		return fail("unbind spi0.1: %s", strerror(-r));
	}
	r = ioctl(fd, SPI_IOC_RD_MODE, &mode) < 0 ? -errno : 0;
	close(fd);
	e = kenv_bind("/sys/bus/spi/drivers/spidev", "spi0.1");
	CHECK(r == -ESHUTDOWN, "ioctl after unbind gave %s, expected ESHUTDOWN",
	      r ? strerror(-r) : "success");
	CHECK(e == 0, "bind spi0.1 again: %s", strerror(-e));
	CHECK(access("/dev/spidev0.1", F_OK) == 0, "/dev/spidev0.1 not back after bind");
	return 0;
}

/* ---- PWM -------------------------------------------------------------- */

static int t_pwm(void)
{
	char chip[128], p[200], buf[64];
	int r;

	r = kenv_pwmchip_path(chip, sizeof(chip));
	CHECK(r == 0, "no pwmchip of pbus-mock-pwm.0");
	snprintf(p, sizeof(p), "%s/npwm", chip);
	r = kenv_read_file(p, buf, sizeof(buf));
	CHECK(r > 0 && atoi(buf) == 4, "npwm is '%s'", r > 0 ? buf : "?");
	CHECK(access("/dev/pwmchip0", F_OK) != 0, "/dev/pwmchip0 exists: update ENVIRONMENT.md");
	snprintf(p, sizeof(p), "%s/export", chip);
	CHECK(kenv_write_file(p, "1") == 0, "export 1: %s", strerror(errno));
	snprintf(p, sizeof(p), "%s/pwm1/period", chip);
	r = kenv_write_file(p, "1000000");
	snprintf(p, sizeof(p), "%s/pwm1/duty_cycle", chip);
	if (!r)
		r = kenv_write_file(p, "250000");
	snprintf(p, sizeof(p), "%s/pwm1/enable", chip);
	if (!r)
		r = kenv_write_file(p, "1");
	snprintf(p, sizeof(p), "%s/unexport", chip);
	if (r) {
		kenv_write_file(p, "1");
		return fail("configure pwm1: %s", strerror(-r));
	}
	r = debugfs_has("/sys/kernel/debug/pbus-mock-pwm/state",
			"pwm=1 requested=1 enabled=1 period=1000000 duty=250000 polarity=normal");
	kenv_write_file(p, "1");
	return r;
}

/* ---- UART ------------------------------------------------------------- */

static int open_tty(const char *path)
{
	struct termios t;
	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	tcgetattr(fd, &t);
	cfmakeraw(&t);
	cfsetspeed(&t, B115200);
	t.c_cflag |= CLOCAL | CREAD;
	tcsetattr(fd, TCSANOW, &t);
	tcflush(fd, TCIOFLUSH);
	return fd;
}

static int uart_pass(int from, int to, const char *what)
{
	const char msg[] = "parambus\x01\xff";
	char in[sizeof(msg)];
	size_t got = 0;

	CHECK(write(from, msg, sizeof(msg) - 1) == (ssize_t)sizeof(msg) - 1, "%s write: %s", what,
	      strerror(errno));
	while (got < sizeof(msg) - 1) {
		struct pollfd p = { .fd = to, .events = POLLIN };
		ssize_t n;

		CHECK(poll(&p, 1, 3000) == 1, "%s: %zu of %zu bytes after 3 s", what, got,
		      sizeof(msg) - 1);
		n = read(to, in + got, sizeof(msg) - 1 - got);
		CHECK(n > 0, "%s read: %s", what, strerror(errno));
		got += (size_t)n;
	}
	CHECK(!memcmp(in, msg, sizeof(msg) - 1), "%s: bytes differ", what);
	return 0;
}

static int t_uart(void)
{
	int a = open_tty("/dev/ttyS1"), b = open_tty("/dev/ttyS2"), r;

	if (a < 0 || b < 0) {
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
		return fail("open ttyS1/ttyS2: %s", strerror(-(a < 0 ? a : b)));
	}
	r = uart_pass(a, b, "ttyS1->ttyS2");
	if (!r)
		r = uart_pass(b, a, "ttyS2->ttyS1");
	close(a);
	close(b);
	return r;
}

/* ---- shortcuts -------------------------------------------------------- */

static int t_shortcuts(void)
{
	static const char *const links[] = {
		"/run/pbus/gpio/pbus-sim0", "/run/pbus/gpio/pbus-sim1",
		"/run/pbus/sim/pbus-sim0/sim_gpio15/pull", "/run/pbus/sim/pbus-sim1/sim_gpio7/value",
		"/run/pbus/i2c-stub", "/run/pbus/i2c-mock", "/run/pbus/pwmchip/npwm",
		"/run/pbus/spi0", "/run/pbus/spi1",
		"/sys/kernel/debug/pbus-mock-i2c/xfers", "/sys/kernel/debug/pbus-mock-i2c/0x51/regs",
		"/sys/kernel/debug/pbus-mock-i2c/0x2a5/pointer", "/sys/kernel/debug/pbus-mock-spi/log",
		"/sys/kernel/debug/pbus-mock-spi/fault", "/sys/kernel/debug/pbus-mock-pwm/fault",
		"/sys/module/spidev/parameters/bufsiz",
	};

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		CHECK(access(links[i], F_OK) == 0, "%s missing", links[i]);
	return 0;
}

/*
 * Leave the environment dirty on purpose, so that test-harness-reset (which
 * runs next) proves the harness resets it between binaries.
 */
static int t_dirty(void)
{
	char chip[128], p[200];
	int fd, r = 0;

	r |= kenv_sim_set_pull("pbus-sim0", 0, 1);
	r |= kenv_write_file(I2CDBG "0x48/regs", "0 ee");
	r |= kenv_write_file(I2CDBG "0x49/present", "0");
	r |= kenv_write_file(I2CDBG "fault", "timeout");
	r |= kenv_write_file("/sys/kernel/debug/pbus-mock-spi/fault", "5");
	r |= kenv_write_file("/sys/kernel/debug/pbus-mock-pwm/fault", "5");
	if (kenv_pwmchip_path(chip, sizeof(chip)) == 0) {
		snprintf(p, sizeof(p), "%s/export", chip);
		r |= kenv_write_file(p, "2");
	}
	r |= kenv_unbind("/sys/bus/spi/drivers/spidev", "spi0.0");
	r |= kenv_sim_set_live("pbus-sim1", 0);
	if (open_i2c("SMBus stub driver", &fd) == 0) {
		union i2c_smbus_data d = { .byte = 0x77 };

		ioctl(fd, I2C_SLAVE, 0x50);
		r |= smbus(fd, I2C_SMBUS_WRITE, 0x01, I2C_SMBUS_BYTE_DATA, &d);
		close(fd);
	}
	CHECK(r == 0, "could not change some state");
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	run("env/shortcuts", t_shortcuts);
	run("gpio/pbus-sim0", t_gpio_sim0);
	run("gpio/pbus-sim1", t_gpio_sim1);
	run("gpio/sim-input-and-edge", t_gpio_sim_input_and_edge);
	run("gpio/sim-output", t_gpio_sim_output);
	run("gpio/trace-and-sysfs", t_gpio_trace_and_sysfs);
	run("gpio/hte-absent", t_gpio_hte_absent);
	run("gpio/sim-remove", t_gpio_sim_remove);
	run("i2c/stub", t_i2c_stub);
	run("i2c/mock-rdwr", t_i2c_mock_rdwr);
	run("i2c/mock-pec-block-10bit", t_i2c_mock_pec_block_10bit);
	run("i2c/mock-present", t_i2c_mock_present);
	run("i2c/mock-unbind-while-open", t_i2c_mock_unbind_while_open);
	run("spi/spidev0.0", t_spidev0);
	run("spi/spidev0.1", t_spidev1);
	run("spi/spidev-remove", t_spidev_remove);
	run("pwm/mock", t_pwm);
	run("uart/ttyS1-ttyS2", t_uart);
	run("env/dirty-for-reset-check", t_dirty);
	return failures ? 1 : 0;
}
