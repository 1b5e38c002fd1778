/* SPDX-License-Identifier: MIT */
/*
 * ioctl.c - the one ioctl wrapper of libparambus-hw, its fault-injection
 * hook, the error strings, and the small sysfs helpers shared by the bus
 * modules.
 *
 * Every ioctl of the library goes through pbus_hw_ioctl(): errors come back
 * the same way from every bus (negative errno, EINTR retried), and a test can
 * observe or fail any ioctl at this one place.  The hook check is one load
 * and one predictable branch, so the hot paths (GPIO set/get, prepared SPI
 * runs, SMBus calls) stay within a few nanoseconds of a bare ioctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw-internal.h"
#include "parambus/hw/common.h"

static pbus_hw_ioctl_hook ioctl_hook;
static void *ioctl_hook_userdata;

void pbus_hw_set_ioctl_hook(pbus_hw_ioctl_hook hook, void *userdata)
{
	ioctl_hook = hook;
	ioctl_hook_userdata = userdata;
}

int pbus_hw_ioctl(int fd, unsigned long request, void *arg)
{
	if (__builtin_expect(ioctl_hook != NULL, 0)) {
		bool handled = false;
		int r = ioctl_hook(fd, request, arg, ioctl_hook_userdata, &handled);
		if (handled)
			return r;
	}
	for (;;) {
		int r = ioctl(fd, request, arg);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return -errno;
	}
}

const char *pbus_hw_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0: return "success";
	case EINVAL: return "invalid argument or configuration";
	case ENOENT: return "no such device, line or file";
	case ENODEV: return "device removed or not present";
	case ENXIO: return "no device answered at this address";
	case EBUSY: return "device, line or address busy (used by someone else)";
	case EACCES: return "permission denied";
	case EPERM: return "operation not permitted";
	case ENOTTY: return "not a device of the expected kind";
	case EOPNOTSUPP: return "operation not supported by this device or kernel";
	case EMSGSIZE: return "transfer too long for the device";
	case E2BIG: return "too many distinct settings or items for one request";
	case ERANGE: return "value out of range";
	case ETIMEDOUT: return "timed out";
	case EAGAIN: return "no data available now (non-blocking)";
	case EINTR: return "interrupted by a signal";
	case EIO: return "input/output error (bus error or short transfer)";
	case EREMOTEIO: return "remote I/O error (no acknowledge)";
	case EBADMSG: return "bad message (checksum or PEC mismatch)";
	case EPROTO: return "protocol error";
	case EDESTADDRREQ: return "no target address set";
	case ENOMEM: return "out of memory";
	case EBADF: return "bad file descriptor";
	case EFAULT: return "bad address";
	case ENOSPC: return "no space left";
	case ESHUTDOWN: return "adapter shut down";
	case EEXIST: return "already exists";
	default: break;
	}
	/* strerrordesc_np() is thread-safe and returns static storage. */
	const char *s = strerrordesc_np(err);
	return s ? s : "unknown error";
}

void pbus_hw_copy_string(char *dst, size_t size, const char *src)
{
	if (size == 0)
		return;
	size_t n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int pbus_hw_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int r = n < 0 ? -errno : ((size_t)n == len ? 0 : -EIO);
	close(fd);
	return r;
}

static int parse_u64(const char *buf, uint64_t *ret_value)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno != 0 || end == buf)
		return -EIO;
	*ret_value = (uint64_t)v;
	return 0;
}

int pbus_hw_pread_u64(int fd, uint64_t *ret_value)
{
	char buf[32];
	ssize_t n;
	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return parse_u64(buf, ret_value);
}

int pbus_hw_pwrite_u64(int fd, uint64_t value)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%" PRIu64, value);
	ssize_t n;
	do
		n = pwrite(fd, buf, (size_t)len, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == len ? 0 : -EIO;
}

int pbus_hw_read_file_u64(const char *path, uint64_t *ret_value)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = pbus_hw_pread_u64(fd, ret_value);
	close(fd);
	return r;
}

int pbus_hw_open_device(const char *path, unsigned long probe_request, void *probe_arg)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISCHR(st.st_mode)) {
		close(fd);
		return -ENOTTY;
	}
	r = pbus_hw_ioctl(fd, probe_request, probe_arg);
	if (r < 0) {
		close(fd);
		/* Another driver's node answers an unknown ioctl with ENOTTY or
		 * EINVAL: either way it is not the device we want. */
		return (r == -ENOTTY || r == -EINVAL) ? -ENOTTY : r;
	}
	return fd;
}
