/*
 * kenv: helpers for test programs in the kernel test VM; see kenv.h and
 * tests/kernel/ENVIRONMENT.md for the environment they find their way in.
 */
#include "kenv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SIMCFG "/sys/kernel/config/gpio-sim"

int kenv_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	close(fd);
	return (int)len;
}

int kenv_write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
}

int kenv_gpiochip_by_label(const char *label, char *path, size_t size)
{
	DIR *d = opendir("/dev");
	struct dirent *e;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		struct gpiochip_info info;
		char p[300];
		int fd;

		if (strncmp(e->d_name, "gpiochip", 8) != 0)
			continue;
		snprintf(p, sizeof(p), "/dev/%s", e->d_name);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, &info) == 0 &&
		    strncmp(info.label, label, sizeof(info.label)) == 0) {
			close(fd);
			ret = snprintf(path, size, "%s", p) < (int)size ? 0 : -ENAMETOOLONG;
			break;
		}
		close(fd);
	}
	closedir(d);
	return ret;
}

int kenv_sim_dir(const char *label, char *path, size_t size)
{
	char p[256], dev[64], chip[64];
	int ret;

	snprintf(p, sizeof(p), SIMCFG "/%s/dev_name", label);
	if ((ret = kenv_read_file(p, dev, sizeof(dev))) < 0)
		return ret;
	snprintf(p, sizeof(p), SIMCFG "/%s/bank0/chip_name", label);
	if ((ret = kenv_read_file(p, chip, sizeof(chip))) < 0)
		return ret;
	chomp(dev);
	chomp(chip);
	if (!strcmp(chip, "none") || !*chip)
		return -ENODEV;	/* the chip is not live */
	return snprintf(path, size, "/sys/devices/platform/%s/%s", dev, chip) < (int)size
		? 0 : -ENAMETOOLONG;
}

int kenv_sim_set_pull(const char *label, unsigned int offset, int up)
{
	char dir[200], p[300];
	int ret = kenv_sim_dir(label, dir, sizeof(dir));

	if (ret < 0)
		return ret;
	snprintf(p, sizeof(p), "%s/sim_gpio%u/pull", dir, offset);
	return kenv_write_file(p, up ? "pull-up" : "pull-down");
}

int kenv_sim_get_value(const char *label, unsigned int offset)
{
	char dir[200], p[300], v[8];
	int ret = kenv_sim_dir(label, dir, sizeof(dir));

	if (ret < 0)
		return ret;
	snprintf(p, sizeof(p), "%s/sim_gpio%u/value", dir, offset);
	if ((ret = kenv_read_file(p, v, sizeof(v))) < 0)
		return ret;
	if (v[0] != '0' && v[0] != '1')
		return -EIO;
	return v[0] - '0';
}

int kenv_sim_set_live(const char *label, int live)
{
	char p[256];

	snprintf(p, sizeof(p), SIMCFG "/%s/live", label);
	return kenv_write_file(p, live ? "1" : "0");
}

int kenv_i2c_bus_by_name(const char *adapter_name)
{
	DIR *d = opendir("/sys/class/i2c-dev");
	struct dirent *e;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char p[300], name[128];
		unsigned int n;

		if (sscanf(e->d_name, "i2c-%u", &n) != 1)
			continue;
		snprintf(p, sizeof(p), "/sys/class/i2c-dev/%s/name", e->d_name);
		if (kenv_read_file(p, name, sizeof(name)) < 0)
			continue;
		chomp(name);
		if (!strcmp(name, adapter_name)) {
			ret = (int)n;
			break;
		}
	}
	closedir(d);
	return ret;
}

int kenv_pwmchip_path(char *path, size_t size)
{
	DIR *d = opendir("/sys/class/pwm");
	struct dirent *e;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char p[300], target[300];
		ssize_t n;

		if (strncmp(e->d_name, "pwmchip", 7) != 0)
			continue;
		snprintf(p, sizeof(p), "/sys/class/pwm/%s/device", e->d_name);
		n = readlink(p, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		if (strstr(target, "/pbus-mock-pwm.0") && !strstr(strstr(target, "/pbus-mock-pwm.0") + 1, "/")) {
			ret = snprintf(path, size, "/sys/class/pwm/%s", e->d_name) < (int)size
				? 0 : -ENAMETOOLONG;
			break;
		}
	}
	closedir(d);
	return ret;
}

int kenv_unbind(const char *driver_dir, const char *device)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/unbind", driver_dir);
	return kenv_write_file(p, device);
}

int kenv_bind(const char *driver_dir, const char *device)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/bind", driver_dir);
	return kenv_write_file(p, device);
}

void kenv_ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

void kenv_fail(const char *name, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	/* The harness reads one line per case: keep the reason on it. */
	for (char *c = reason; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = '|';
	printf("not ok %s: %s\n", name, reason);
	fflush(stdout);
}
