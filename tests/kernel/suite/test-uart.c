/* SPDX-License-Identifier: MIT */
/*
 * test-uart.c - libparambus-hw UART on two cross-linked emulated 16550s
 * (/dev/ttyS1 <-> /dev/ttyS2) and on a pty pair (ENVIRONMENT.md section 7).
 * The 16550 shows real framing (data bits, parity) and rounds rates to what
 * it can make; the pty keeps arbitrary rates exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/suite.h"
#include "parambus/hw/uart.h"

static struct pbus_uart *open_port(const char *path, uint32_t baud, unsigned int flags)
{
	struct pbus_uart *u = NULL;
	struct pbus_uart_config c;
	pbus_uart_config_init(&c);
	c.baud_rate = baud;
	return pbus_uart_open(path, &c, flags, &u) == 0 ? u : NULL;
}

/* Read exactly @n bytes within @timeout_ms. */
static int read_all(struct pbus_uart *u, uint8_t *buf, size_t n, int timeout_ms)
{
	size_t got = 0;
	uint64_t deadline = suite_now_ms() + (uint64_t)timeout_ms;
	while (got < n) {
		int64_t left = (int64_t)(deadline - suite_now_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		int r = pbus_uart_read_timeout(u, buf + got, n - got, (int)left);
		if (r < 0)
			return r;
		got += (size_t)r;
	}
	return (int)got;
}

static const char *bytes_cross_the_link(void)
{
	struct pbus_uart *a = open_port("/dev/ttyS1", 115200, 0), *b = open_port("/dev/ttyS2", 115200, 0);
	T_EXPECT(a && b);
	T_EXPECT(fcntl(pbus_uart_get_fd(a), F_GETFD) & FD_CLOEXEC);
	T_EQ(pbus_uart_flush(a, PBUS_UART_QUEUE_BOTH), 0);
	T_EQ(pbus_uart_flush(b, PBUS_UART_QUEUE_BOTH), 0);
	uint8_t out[64], in[64];
	for (int i = 0; i < 64; i++)
		out[i] = (uint8_t)(i * 37); /* includes 0x00, 0x0a, 0x0d, 0x11, 0x13 */
	T_EQ(pbus_uart_write(a, out, 64), 64);
	T_EQ(pbus_uart_drain(a), 0);
	T_EQ(read_all(b, in, 64, 5000), 64);
	T_EXPECT(memcmp(in, out, 64) == 0);
	T_EQ(pbus_uart_write(b, "pong", 4), 4);
	T_EQ(read_all(a, in, 4, 5000), 4);
	T_EXPECT(memcmp(in, "pong", 4) == 0);
	pbus_uart_close(a);
	pbus_uart_close(b);
	return NULL;
}

static const char *framing_on_16550(void)
{
	struct pbus_uart *u = open_port("/dev/ttyS1", 115200, 0);
	T_EXPECT(u);
	static const struct {
		uint8_t data, stop;
		enum pbus_uart_parity parity;
		enum pbus_uart_flow_control flow;
	} cases[] = {
		{ 7, 2, PBUS_UART_PARITY_EVEN, PBUS_UART_FLOW_NONE },
		{ 5, 1, PBUS_UART_PARITY_ODD, PBUS_UART_FLOW_RTS_CTS },
		{ 6, 2, PBUS_UART_PARITY_MARK, PBUS_UART_FLOW_XON_XOFF },
		{ 8, 1, PBUS_UART_PARITY_SPACE, PBUS_UART_FLOW_NONE },
		{ 8, 1, PBUS_UART_PARITY_NONE, PBUS_UART_FLOW_NONE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pbus_uart_config c = { .baud_rate = 38400, .data_bits = cases[i].data,
					      .stop_bits = cases[i].stop, .parity = cases[i].parity,
					      .flow_control = cases[i].flow };
		struct pbus_uart_config got;
		T_EQ(pbus_uart_configure(u, &c), 0);
		T_EQ(pbus_uart_get_config(u, &got), 0);
		T_EQ(got.baud_rate, 38400);
		T_EQ(got.data_bits, c.data_bits);
		T_EQ(got.stop_bits, c.stop_bits);
		T_EQ(got.parity, c.parity);
		T_EQ(got.flow_control, c.flow_control);
	}
	pbus_uart_close(u);
	return NULL;
}

static const char *rate_is_what_the_driver_made(void)
{
	/* The emulated 16550 tops out at 115200: the 8250 driver refuses
	 * 250000 and keeps a rate it can make (the previous one, else 9600).
	 * The read-back is what the driver really set, not what was asked. */
	struct pbus_uart *u = open_port("/dev/ttyS2", 9600, 0);
	T_EXPECT(u);
	struct pbus_uart_config got;
	T_EQ(pbus_uart_get_config(u, &got), 0);
	T_EQ(got.baud_rate, 9600);
	struct pbus_uart_config c;
	pbus_uart_config_init(&c);
	c.baud_rate = 250000;
	T_EQ(pbus_uart_configure(u, &c), 0);
	T_EQ(pbus_uart_get_config(u, &got), 0);
	T_EQ(got.baud_rate, 9600);
	c.baud_rate = 115200;
	T_EQ(pbus_uart_configure(u, &c), 0);
	c.baud_rate = 250000;
	T_EQ(pbus_uart_configure(u, &c), 0);
	T_EQ(pbus_uart_get_config(u, &got), 0);
	T_EQ(got.baud_rate, 115200);
	pbus_uart_close(u);
	return NULL;
}

static const char *arbitrary_rate_on_pty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	T_EXPECT(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	char name[64];
	T_EQ(ptsname_r(m, name, sizeof(name)), 0);
	struct pbus_uart *u = open_port(name, 250000, 0);
	T_EXPECT(u);
	struct pbus_uart_config got;
	T_EQ(pbus_uart_get_config(u, &got), 0);
	T_EQ(got.baud_rate, 250000);
	struct pbus_uart_config c;
	pbus_uart_config_init(&c);
	c.baud_rate = 31250; /* MIDI */
	T_EQ(pbus_uart_configure(u, &c), 0);
	T_EQ(pbus_uart_get_config(u, &got), 0);
	T_EQ(got.baud_rate, 31250);
	T_EXPECT(write(m, "x", 1) == 1);
	uint8_t b;
	T_EQ(read_all(u, &b, 1, 2000), 1);
	T_EQ(b, 'x');
	pbus_uart_close(u);
	close(m);
	return NULL;
}

static const char *event_loop_nonblocking(void)
{
	struct pbus_uart *a = open_port("/dev/ttyS1", 115200, 0);
	struct pbus_uart *b = open_port("/dev/ttyS2", 115200, PBUS_UART_OPEN_NONBLOCK);
	T_EXPECT(a && b);
	pbus_uart_flush(b, PBUS_UART_QUEUE_INPUT);
	uint8_t buf[16];
	T_EQ(pbus_uart_read(b, buf, sizeof(buf)), -EAGAIN);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ee = { .events = EPOLLIN };
	T_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, pbus_uart_get_fd(b), &ee), 0);
	T_EQ(epoll_wait(ep, &ee, 1, 0), 0);
	T_EQ(pbus_uart_write(a, "event", 5), 5);
	size_t got = 0;
	uint64_t deadline = suite_now_ms() + 5000;
	while (got < 5 && suite_now_ms() < deadline) {
		if (epoll_wait(ep, &ee, 1, 1000) != 1)
			continue;
		int r;
		while ((r = pbus_uart_read(b, buf + got, sizeof(buf) - got)) > 0)
			got += (size_t)r;
		T_EQ(r, -EAGAIN);
	}
	T_EQ(got, 5);
	T_EXPECT(memcmp(buf, "event", 5) == 0);
	close(ep);
	pbus_uart_close(a);
	pbus_uart_close(b);
	return NULL;
}

static const char *read_timeouts(void)
{
	struct pbus_uart *b = open_port("/dev/ttyS2", 115200, 0);
	T_EXPECT(b);
	pbus_uart_flush(b, PBUS_UART_QUEUE_INPUT);
	uint8_t buf[4];
	uint64_t t0 = suite_now_ms();
	T_EQ(pbus_uart_read_timeout(b, buf, sizeof(buf), 200), -ETIMEDOUT);
	T_EXPECT(suite_now_ms() - t0 >= 150);
	/* termios timeout: VMIN 0, VTIME 3 => a read returns 0 after ~0.3 s */
	T_EQ(pbus_uart_set_read_mode(b, 0, 3), 0);
	t0 = suite_now_ms();
	T_EQ(pbus_uart_read(b, buf, sizeof(buf)), 0);
	T_EXPECT(suite_now_ms() - t0 >= 200);
	pbus_uart_close(b);
	return NULL;
}

static const char *pending_and_flush(void)
{
	struct pbus_uart *a = open_port("/dev/ttyS1", 115200, 0), *b = open_port("/dev/ttyS2", 115200, 0);
	T_EXPECT(a && b);
	pbus_uart_flush(b, PBUS_UART_QUEUE_INPUT);
	T_EQ(pbus_uart_write(a, "12345678", 8), 8);
	T_EQ(pbus_uart_drain(a), 0);
	T_EXPECT(pbus_uart_get_output_pending(a) >= 0);
	uint64_t deadline = suite_now_ms() + 5000;
	while (pbus_uart_get_input_pending(b) < 8 && suite_now_ms() < deadline)
		suite_sleep_ms(10);
	T_EQ(pbus_uart_get_input_pending(b), 8);
	T_EQ(pbus_uart_flush(b, PBUS_UART_QUEUE_INPUT), 0);
	T_EQ(pbus_uart_get_input_pending(b), 0);
	pbus_uart_close(a);
	pbus_uart_close(b);
	return NULL;
}

static const char *open_errors(void)
{
	struct pbus_uart *u = NULL;
	T_EQ(pbus_uart_open("/dev/ttyS9", NULL, 0, &u), -ENOENT);
	T_EQ(pbus_uart_open("/dev/null", NULL, 0, &u), -ENOTTY);
	struct pbus_uart_config c;
	pbus_uart_config_init(&c);
	c.stop_bits = 0;
	T_EQ(pbus_uart_open("/dev/ttyS1", &c, 0, &u), -EINVAL);
	T_EXPECT(u == NULL);
	/* exclusive: a second open by an unprivileged user who could open
	 * the node is refused with -EBUSY */
	struct stat st;
	T_EQ(stat("/dev/ttyS1", &st), 0);
	T_EQ(chmod("/dev/ttyS1", 0666), 0);
	u = open_port("/dev/ttyS1", 115200, PBUS_UART_OPEN_EXCLUSIVE);
	T_EXPECT(u);
	pid_t pid = fork();
	if (pid == 0) {
		struct pbus_uart *v = NULL;
		if (setuid(65534) < 0)
			_exit(100);
		int r = pbus_uart_open("/dev/ttyS1", NULL, 0, &v);
		_exit(r == -EBUSY ? 0 : 1);
	}
	int status = 0;
	T_EQ(waitpid(pid, &status, 0), pid);
	pbus_uart_close(u);
	chmod("/dev/ttyS1", st.st_mode & 07777);
	T_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return NULL;
}

int main(void)
{
	suite_init();
	SUITE_RUN("uart/bytes-cross-the-link", bytes_cross_the_link);
	SUITE_RUN("uart/framing-on-16550", framing_on_16550);
	SUITE_RUN("uart/rate-is-what-the-driver-made", rate_is_what_the_driver_made);
	SUITE_RUN("uart/arbitrary-rate-on-pty", arbitrary_rate_on_pty);
	SUITE_RUN("uart/event-loop-nonblocking", event_loop_nonblocking);
	SUITE_RUN("uart/read-timeouts", read_timeouts);
	SUITE_RUN("uart/pending-and-flush", pending_and_flush);
	SUITE_RUN("uart/open-errors", open_errors);
	return suite_exit();
}
