/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/uart.h - serial ports (ttys) configured with termios2.
 *
 * termios2 (TCGETS2/TCSETS2 with BOTHER) sets any baud rate the driver can
 * make, not only the Bxxx table; the rate the driver actually chose is read
 * back with pbus_uart_get_config().  The port is put in raw mode (no echo,
 * no line editing, no CR/LF translation, no signals): bytes in, bytes out.
 *
 * Reading: blocking with the termios VMIN/VTIME rules
 * (pbus_uart_set_read_mode()), with a poll()-based timeout
 * (pbus_uart_read_timeout()), or non-blocking for an event loop
 * (PBUS_UART_OPEN_NONBLOCK or pbus_uart_set_nonblocking(), then poll the
 * descriptor from pbus_uart_get_fd() and read until -EAGAIN).
 *
 * Threads: one thread per object; a reader thread and a writer thread on
 * the same port are fine (independent system calls, no library state).
 */
#ifndef PARAMBUS_HW_UART_H
#define PARAMBUS_HW_UART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/hw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_uart;

enum pbus_uart_parity {
	PBUS_UART_PARITY_NONE = 0,
	PBUS_UART_PARITY_ODD,
	PBUS_UART_PARITY_EVEN,
	PBUS_UART_PARITY_MARK,  /**< parity bit always 1 (CMSPAR) */
	PBUS_UART_PARITY_SPACE, /**< parity bit always 0 (CMSPAR) */
};

enum pbus_uart_flow_control {
	PBUS_UART_FLOW_NONE = 0,
	PBUS_UART_FLOW_RTS_CTS,  /**< hardware (CRTSCTS) */
	PBUS_UART_FLOW_XON_XOFF, /**< software (IXON | IXOFF) */
};

/** Serial settings.  pbus_uart_config_init() gives 115200 8N1, no flow control. */
struct pbus_uart_config {
	uint32_t baud_rate;  /**< any rate, e.g. 250000; the driver may round it */
	uint8_t data_bits;   /**< 5..8 */
	uint8_t stop_bits;   /**< 1 or 2 */
	enum pbus_uart_parity parity;
	enum pbus_uart_flow_control flow_control;
};

/** Flags of pbus_uart_open(). */
enum {
	PBUS_UART_OPEN_NONBLOCK = 1u << 0,  /**< O_NONBLOCK: reads/writes return -EAGAIN instead of waiting */
	PBUS_UART_OPEN_EXCLUSIVE = 1u << 1, /**< TIOCEXCL: refuse further opens (except by root) */
};

/** pbus_uart_config_init() - fill @config with 115200 8N1, no flow control. */
PBUS_API void pbus_uart_config_init(struct pbus_uart_config *config);

/**
 * pbus_uart_open() - open a tty (O_RDWR | O_NOCTTY | O_CLOEXEC), make it raw
 * and apply @config (NULL: keep the port's framing and rate, only make it
 * raw).  Modem control lines are ignored (CLOCAL), receiving is on (CREAD),
 * reads block until at least one byte arrives (VMIN 1, VTIME 0).
 *
 * Return: 0, or -EINVAL (NULL @path/@ret_uart, unknown flag, bad config),
 * -ENOENT, -EACCES, -EBUSY (PBUS_UART_OPEN_EXCLUSIVE held by someone else),
 * -ENOTTY (@path is not a tty), -EIO, -ENOMEM.
 */
PBUS_API int pbus_uart_open(const char *path, const struct pbus_uart_config *config, unsigned int flags,
			    struct pbus_uart **ret_uart);

/** pbus_uart_close() - close the port; NULL is ignored.  Pending output is not waited for: drain first. */
PBUS_API void pbus_uart_close(struct pbus_uart *uart);

/** pbus_uart_get_fd() - the descriptor, owned by @uart, for poll/epoll; -EINVAL if NULL. */
PBUS_API int pbus_uart_get_fd(const struct pbus_uart *uart);

/**
 * pbus_uart_configure() - apply @config with one TCSETS2.
 * Return: 0, -EINVAL (baud 0, data bits outside 5..8, stop bits not 1/2,
 * unknown parity or flow control), -ENODEV/-EIO (port gone).
 */
PBUS_API int pbus_uart_configure(struct pbus_uart *uart, const struct pbus_uart_config *config);

/**
 * pbus_uart_get_config() - the settings the driver holds (TCGETS2): the
 * baud rate is the one actually in effect, which may differ from the one
 * requested.
 * Return: 0, -EINVAL, -EIO.
 */
PBUS_API int pbus_uart_get_config(struct pbus_uart *uart, struct pbus_uart_config *ret_config);

/**
 * pbus_uart_set_read_mode() - the termios read rules for blocking reads:
 * a read returns when @min_bytes (VMIN, 0..255) arrived, or @timeout_ds
 * (VTIME, tenths of a second, 0..255) passed since the last byte.  (1, 0)
 * is the default; (0, 0) makes reads return at once with what is there.
 * Return: 0, -EINVAL, -EIO.
 */
PBUS_API int pbus_uart_set_read_mode(struct pbus_uart *uart, uint8_t min_bytes, uint8_t timeout_ds);

/** pbus_uart_set_nonblocking() - switch O_NONBLOCK.  0, -EINVAL, or an fcntl errno. */
PBUS_API int pbus_uart_set_nonblocking(struct pbus_uart *uart, bool nonblocking);

/**
 * pbus_uart_read() - read up to @length bytes (one read(2)).
 * Return: the number of bytes read (0 only with VMIN 0 when nothing
 * arrived), -EAGAIN (non-blocking, nothing there), -EINTR, -EIO, -EINVAL.
 */
PBUS_API int pbus_uart_read(struct pbus_uart *uart, void *data, size_t length);

/**
 * pbus_uart_read_timeout() - wait up to @timeout_ms (-1: forever) for data,
 * then read what is there, up to @length bytes.
 * Return: the number of bytes read (>= 1), -ETIMEDOUT (nothing arrived in
 * time), -EINTR, -EIO, -EINVAL.
 */
PBUS_API int pbus_uart_read_timeout(struct pbus_uart *uart, void *data, size_t length, int timeout_ms);

/**
 * pbus_uart_write() - write up to @length bytes (one write(2)).
 * Return: the number of bytes written (may be fewer), -EAGAIN
 * (non-blocking, output buffer full), -EINTR, -EIO, -EINVAL.
 */
PBUS_API int pbus_uart_write(struct pbus_uart *uart, const void *data, size_t length);

/** pbus_uart_drain() - wait until all written bytes have been sent (TCSBRK 1, i.e. tcdrain).  0, -EINTR, -EIO. */
PBUS_API int pbus_uart_drain(struct pbus_uart *uart);

/** Which queue pbus_uart_flush() discards. */
enum pbus_uart_queue {
	PBUS_UART_QUEUE_INPUT = 0,  /**< received, not yet read */
	PBUS_UART_QUEUE_OUTPUT = 1, /**< written, not yet sent */
	PBUS_UART_QUEUE_BOTH = 2,
};

/** pbus_uart_flush() - discard a queue (TCFLSH).  0, -EINVAL, -EIO. */
PBUS_API int pbus_uart_flush(struct pbus_uart *uart, enum pbus_uart_queue queue);

/** pbus_uart_get_input_pending() - bytes received and not yet read (FIONREAD), or -errno. */
PBUS_API int pbus_uart_get_input_pending(struct pbus_uart *uart);

/** pbus_uart_get_output_pending() - bytes written and not yet sent (TIOCOUTQ), or -errno. */
PBUS_API int pbus_uart_get_output_pending(struct pbus_uart *uart);

#ifdef __cplusplus
}
#endif

#endif /* PARAMBUS_HW_UART_H */
