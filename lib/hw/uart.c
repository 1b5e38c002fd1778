/* SPDX-License-Identifier: MIT */
/*
 * uart.c - serial ports through termios2.
 *
 * glibc's termios API cannot express arbitrary baud rates (cfsetspeed()
 * takes Bxxx constants), so this file talks to the kernel's struct termios2
 * directly with TCGETS2/TCSETS2 and BOTHER.  That is also why it includes
 * <asm/termbits.h> and must never include <termios.h>: the two define the
 * same names differently.
 *
 * The port is opened O_NONBLOCK first so that open() cannot hang waiting for
 * carrier on a modem-controlled line; once CLOCAL is set the flag is cleared
 * unless the caller asked for non-blocking I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asm/ioctls.h>
#include <asm/termbits.h>

#include "hw-internal.h"
#include "parambus/hw/uart.h"

struct pbus_uart {
	int fd;
};

#define ARG(v) ((void *)(unsigned long)(v))

void pbus_uart_config_init(struct pbus_uart_config *config)
{
	if (!config)
		return;
	memset(config, 0, sizeof(*config));
	config->baud_rate = 115200;
	config->data_bits = 8;
	config->stop_bits = 1;
	config->parity = PBUS_UART_PARITY_NONE;
	config->flow_control = PBUS_UART_FLOW_NONE;
}

static int check_config(const struct pbus_uart_config *c)
{
	if (c->baud_rate == 0 || c->data_bits < 5 || c->data_bits > 8 || (c->stop_bits != 1 && c->stop_bits != 2))
		return -EINVAL;
	if ((unsigned)c->parity > PBUS_UART_PARITY_SPACE || (unsigned)c->flow_control > PBUS_UART_FLOW_XON_XOFF)
		return -EINVAL;
	return 0;
}

/* Raw mode: the equivalent of cfmakeraw(), plus CLOCAL | CREAD. */
static void make_raw(struct termios2 *t)
{
	t->c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF |
				  IXANY | INPCK | IUCLC | IMAXBEL);
	t->c_oflag &= ~(tcflag_t)OPOST;
	t->c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL | ICANON | ISIG | IEXTEN);
	t->c_cflag |= CLOCAL | CREAD;
}

static void apply_config(struct termios2 *t, const struct pbus_uart_config *c)
{
	static const tcflag_t sizes[] = { CS5, CS6, CS7, CS8 };

	t->c_cflag &= ~(tcflag_t)(CSIZE | CSTOPB | PARENB | PARODD | CMSPAR | CRTSCTS);
	t->c_cflag |= sizes[c->data_bits - 5];
	if (c->stop_bits == 2)
		t->c_cflag |= CSTOPB;
	switch (c->parity) {
	case PBUS_UART_PARITY_NONE: break;
	case PBUS_UART_PARITY_ODD: t->c_cflag |= PARENB | PARODD; break;
	case PBUS_UART_PARITY_EVEN: t->c_cflag |= PARENB; break;
	case PBUS_UART_PARITY_MARK: t->c_cflag |= PARENB | CMSPAR | PARODD; break;
	case PBUS_UART_PARITY_SPACE: t->c_cflag |= PARENB | CMSPAR; break;
	}
	t->c_iflag &= ~(tcflag_t)(INPCK | IXON | IXOFF | IXANY);
	if (c->parity != PBUS_UART_PARITY_NONE)
		t->c_iflag |= INPCK; /* check received parity; bad bytes arrive as NUL (no PARMRK) */
	switch (c->flow_control) {
	case PBUS_UART_FLOW_NONE: break;
	case PBUS_UART_FLOW_RTS_CTS: t->c_cflag |= CRTSCTS; break;
	case PBUS_UART_FLOW_XON_XOFF: t->c_iflag |= IXON | IXOFF; break;
	}
	/* Any rate: BOTHER in both the output and the input speed fields. */
	t->c_cflag &= ~(tcflag_t)(CBAUD | (CBAUD << IBSHIFT));
	t->c_cflag |= BOTHER | (BOTHER << IBSHIFT);
	t->c_ispeed = c->baud_rate;
	t->c_ospeed = c->baud_rate;
}

static int set_nonblocking(int fd, bool nonblocking)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	int nfl = nonblocking ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	if (nfl != fl && fcntl(fd, F_SETFL, nfl) < 0)
		return -errno;
	return 0;
}

int pbus_uart_open(const char *path, const struct pbus_uart_config *config, unsigned int flags,
		   struct pbus_uart **ret_uart)
{
	struct termios2 t;
	int r;

	if (!path || !*path || !ret_uart ||
	    (flags & ~(unsigned)(PBUS_UART_OPEN_NONBLOCK | PBUS_UART_OPEN_EXCLUSIVE)))
		return -EINVAL;
	if (config && (r = check_config(config)) < 0)
		return r;

	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = pbus_hw_ioctl(fd, TCGETS2, &t);
	if (r < 0)
		goto fail;
	if (flags & PBUS_UART_OPEN_EXCLUSIVE) {
		r = pbus_hw_ioctl(fd, TIOCEXCL, NULL);
		if (r < 0)
			goto fail;
	}
	make_raw(&t);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (config)
		apply_config(&t, config);
	r = pbus_hw_ioctl(fd, TCSETS2, &t);
	if (r < 0)
		goto fail;
	if (!(flags & PBUS_UART_OPEN_NONBLOCK) && (r = set_nonblocking(fd, false)) < 0)
		goto fail;

	struct pbus_uart *uart = calloc(1, sizeof(*uart));
	if (!uart) {
		r = -ENOMEM;
		goto fail;
	}
	uart->fd = fd;
	*ret_uart = uart;
	return 0;
fail:
	close(fd);
	return r;
}

void pbus_uart_close(struct pbus_uart *uart)
{
	if (!uart)
		return;
	close(uart->fd);
	free(uart);
}

int pbus_uart_get_fd(const struct pbus_uart *uart)
{
	return uart ? uart->fd : -EINVAL;
}

int pbus_uart_configure(struct pbus_uart *uart, const struct pbus_uart_config *config)
{
	struct termios2 t;

	if (!uart || !config)
		return -EINVAL;
	int r = check_config(config);
	if (r < 0)
		return r;
	r = pbus_hw_ioctl(uart->fd, TCGETS2, &t);
	if (r < 0)
		return r;
	make_raw(&t);
	apply_config(&t, config);
	r = pbus_hw_ioctl(uart->fd, TCSETS2, &t);
	return r < 0 ? r : 0;
}

int pbus_uart_get_config(struct pbus_uart *uart, struct pbus_uart_config *ret_config)
{
	struct termios2 t;
	struct pbus_uart_config c;

	if (!uart || !ret_config)
		return -EINVAL;
	int r = pbus_hw_ioctl(uart->fd, TCGETS2, &t);
	if (r < 0)
		return r;
	memset(&c, 0, sizeof(c));
	c.baud_rate = t.c_ospeed;
	switch (t.c_cflag & CSIZE) {
	case CS5: c.data_bits = 5; break;
	case CS6: c.data_bits = 6; break;
	case CS7: c.data_bits = 7; break;
	default: c.data_bits = 8; break;
	}
	c.stop_bits = (t.c_cflag & CSTOPB) ? 2 : 1;
	if (!(t.c_cflag & PARENB))
		c.parity = PBUS_UART_PARITY_NONE;
	else if (t.c_cflag & CMSPAR)
		c.parity = (t.c_cflag & PARODD) ? PBUS_UART_PARITY_MARK : PBUS_UART_PARITY_SPACE;
	else
		c.parity = (t.c_cflag & PARODD) ? PBUS_UART_PARITY_ODD : PBUS_UART_PARITY_EVEN;
	if (t.c_cflag & CRTSCTS)
		c.flow_control = PBUS_UART_FLOW_RTS_CTS;
	else if (t.c_iflag & (IXON | IXOFF))
		c.flow_control = PBUS_UART_FLOW_XON_XOFF;
	*ret_config = c;
	return 0;
}

int pbus_uart_set_read_mode(struct pbus_uart *uart, uint8_t min_bytes, uint8_t timeout_ds)
{
	struct termios2 t;

	if (!uart)
		return -EINVAL;
	int r = pbus_hw_ioctl(uart->fd, TCGETS2, &t);
	if (r < 0)
		return r;
	t.c_cc[VMIN] = min_bytes;
	t.c_cc[VTIME] = timeout_ds;
	r = pbus_hw_ioctl(uart->fd, TCSETS2, &t);
	return r < 0 ? r : 0;
}

int pbus_uart_set_nonblocking(struct pbus_uart *uart, bool nonblocking)
{
	if (!uart)
		return -EINVAL;
	return set_nonblocking(uart->fd, nonblocking);
}

int pbus_uart_read(struct pbus_uart *uart, void *data, size_t length)
{
	if (!uart || !data || length == 0)
		return -EINVAL;
	if (length > INT_MAX)
		length = INT_MAX;
	ssize_t n = read(uart->fd, data, length);
	return n < 0 ? -errno : (int)n;
}

int pbus_uart_read_timeout(struct pbus_uart *uart, void *data, size_t length, int timeout_ms)
{
	if (!uart || !data || length == 0)
		return -EINVAL;
	if (length > INT_MAX)
		length = INT_MAX;
	struct pollfd p = { .fd = uart->fd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	/* Data is there: read it without waiting for VMIN more bytes. */
	int fl = fcntl(uart->fd, F_GETFL);
	if (fl < 0)
		return -errno;
	if (!(fl & O_NONBLOCK) && fcntl(uart->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	ssize_t n = read(uart->fd, data, length);
	int err = errno;
	if (!(fl & O_NONBLOCK))
		(void)fcntl(uart->fd, F_SETFL, fl);
	if (n < 0)
		return err == EAGAIN ? -ETIMEDOUT : -err;
	if (n == 0)
		return (p.revents & (POLLHUP | POLLERR)) ? -EIO : -ETIMEDOUT;
	return (int)n;
}

int pbus_uart_write(struct pbus_uart *uart, const void *data, size_t length)
{
	if (!uart || !data || length == 0)
		return -EINVAL;
	if (length > INT_MAX)
		length = INT_MAX;
	ssize_t n = write(uart->fd, data, length);
	return n < 0 ? -errno : (int)n;
}

int pbus_uart_drain(struct pbus_uart *uart)
{
	if (!uart)
		return -EINVAL;
	int r = pbus_hw_ioctl(uart->fd, TCSBRK, ARG(1));
	return r < 0 ? r : 0;
}

int pbus_uart_flush(struct pbus_uart *uart, enum pbus_uart_queue queue)
{
	static const int kernel_queue[] = { TCIFLUSH, TCOFLUSH, TCIOFLUSH };

	if (!uart || (unsigned)queue > PBUS_UART_QUEUE_BOTH)
		return -EINVAL;
	int r = pbus_hw_ioctl(uart->fd, TCFLSH, ARG(kernel_queue[queue]));
	return r < 0 ? r : 0;
}

int pbus_uart_get_input_pending(struct pbus_uart *uart)
{
	int n = 0;
	if (!uart)
		return -EINVAL;
	int r = pbus_hw_ioctl(uart->fd, FIONREAD, &n);
	return r < 0 ? r : n;
}

int pbus_uart_get_output_pending(struct pbus_uart *uart)
{
	int n = 0;
	if (!uart)
		return -EINVAL;
	int r = pbus_hw_ioctl(uart->fd, TIOCOUTQ, &n);
	return r < 0 ? r : n;
}
