/* SPDX-License-Identifier: MIT */
/*
 * test-hw-uart-pty.c - the UART layer on a pseudo-terminal pair.
 *
 * A pty is a real tty driver that stores whatever termios2 it is given,
 * arbitrary baud rates included, and passes bytes between master and slave:
 * the library opens the slave as its "serial port" and the test plays the
 * far end on the master.  (The VM suite repeats the byte path on two
 * emulated 16550s, whose rates are capped at 115200.)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <asm/ioctls.h>
#include <asm/termbits.h>
#include <sys/ioctl.h>

#include "hw-internal.h"
#include "pbus-check.h"
#include "parambus/hw/uart.h"

static int master = -1;
static char slave_path[128];

static int open_pair(void)
{
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		return -1;
	if (ptsname_r(master, slave_path, sizeof(slave_path)) != 0)
		return -1;
	/* The master side echoes nothing and translates nothing once the slave
	 * is raw, which the library does at open. */
	return 0;
}

static void close_pair(void)
{
	if (master >= 0)
		close(master);
	master = -1;
}

static void arbitrary_baud_rates_exact(void)
{
	static const uint32_t rates[] = { 250000, 31250, 12345, 1000000, 921600, 115200, 50, 3000000 };
	REQUIRE_EQ(open_pair(), 0);
	struct pbus_uart *u = NULL;
	struct pbus_uart_config c;
	pbus_uart_config_init(&c);
	REQUIRE_EQ(c.baud_rate, 115200);
	REQUIRE_EQ(pbus_uart_open(slave_path, &c, 0, &u), 0);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct pbus_uart_config got;
		c.baud_rate = rates[i];
		REQUIRE_EQ(pbus_uart_configure(u, &c), 0);
		REQUIRE_EQ(pbus_uart_get_config(u, &got), 0);
		REQUIRE_EQ(got.baud_rate, rates[i]);
	}
	/* The kernel holds BOTHER and the rate in termios2. */
	struct termios2 t;
	REQUIRE_EQ(ioctl(pbus_uart_get_fd(u), TCGETS2, &t), 0);
	REQUIRE_EQ(t.c_cflag & CBAUD, BOTHER);
	REQUIRE_EQ(t.c_ospeed, 3000000);
	REQUIRE_EQ(t.c_ispeed, 3000000);
	pbus_uart_close(u);
	close_pair();
}

/* The pty driver forces CS8 and no parity on what it stores, so the
 * framing the library SENDS is checked by observing TCSETS2 through the
 * ioctl hook (the call still goes to the kernel); stop bits and flow
 * control are also checked on the read-back.  The VM suite checks data
 * bits and parity read back from a real 16550. */
static struct termios2 sent;
static int observe_tcsets2(int fd, unsigned long request, void *arg, void *userdata, bool *handled)
{
	(void)fd;
	(void)userdata;
	if (request == TCSETS2)
		sent = *(struct termios2 *)arg;
	*handled = false;
	return 0;
}

static void framing_and_flow_control(void)
{
	REQUIRE_EQ(open_pair(), 0);
	struct pbus_uart *u = NULL;
	REQUIRE_EQ(pbus_uart_open(slave_path, NULL, 0, &u), 0);
	static const struct {
		uint8_t data, stop;
		enum pbus_uart_parity parity;
		enum pbus_uart_flow_control flow;
	} cases[] = {
		{ 8, 1, PBUS_UART_PARITY_NONE, PBUS_UART_FLOW_NONE },
		{ 7, 2, PBUS_UART_PARITY_EVEN, PBUS_UART_FLOW_RTS_CTS },
		{ 5, 1, PBUS_UART_PARITY_ODD, PBUS_UART_FLOW_XON_XOFF },
		{ 6, 2, PBUS_UART_PARITY_MARK, PBUS_UART_FLOW_NONE },
		{ 8, 1, PBUS_UART_PARITY_SPACE, PBUS_UART_FLOW_RTS_CTS },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pbus_uart_config c = { .baud_rate = 57600, .data_bits = cases[i].data,
					      .stop_bits = cases[i].stop, .parity = cases[i].parity,
					      .flow_control = cases[i].flow };
		struct pbus_uart_config got;
		static const tcflag_t sizes[] = { CS5, CS6, CS7, CS8 };
		static const tcflag_t parity[] = { 0, PARENB | PARODD, PARENB, PARENB | PARODD | CMSPAR,
						   PARENB | CMSPAR };
		pbus_hw_set_ioctl_hook(observe_tcsets2, NULL);
		int r = pbus_uart_configure(u, &c);
		pbus_hw_set_ioctl_hook(NULL, NULL);
		REQUIRE_EQ(r, 0);
		REQUIRE_EQ(sent.c_cflag & CSIZE, sizes[c.data_bits - 5]);
		REQUIRE_EQ(sent.c_cflag & (PARENB | PARODD | CMSPAR), parity[c.parity]);
		REQUIRE_EQ(!!(sent.c_iflag & INPCK), c.parity != PBUS_UART_PARITY_NONE);
		REQUIRE_EQ(!!(sent.c_cflag & CSTOPB), c.stop_bits == 2);
		REQUIRE_EQ(!!(sent.c_cflag & CRTSCTS), c.flow_control == PBUS_UART_FLOW_RTS_CTS);
		REQUIRE_EQ((sent.c_iflag & (IXON | IXOFF)) == (IXON | IXOFF), c.flow_control == PBUS_UART_FLOW_XON_XOFF);
		REQUIRE_EQ(sent.c_ospeed, 57600);
		REQUIRE_EQ(pbus_uart_get_config(u, &got), 0);
		REQUIRE_EQ(got.stop_bits, c.stop_bits);
		REQUIRE_EQ(got.flow_control, c.flow_control);
		REQUIRE_EQ(got.baud_rate, 57600);
	}
	struct termios2 t;
	REQUIRE_EQ(ioctl(pbus_uart_get_fd(u), TCGETS2, &t), 0);
	REQUIRE(t.c_cflag & CLOCAL);
	REQUIRE(t.c_cflag & CREAD);
	REQUIRE(!(t.c_lflag & (ICANON | ECHO | ISIG)));
	REQUIRE(!(t.c_oflag & OPOST));

	struct pbus_uart_config bad;
	pbus_uart_config_init(&bad);
	bad.data_bits = 9;
	REQUIRE_EQ(pbus_uart_configure(u, &bad), -EINVAL);
	pbus_uart_config_init(&bad);
	bad.stop_bits = 3;
	REQUIRE_EQ(pbus_uart_configure(u, &bad), -EINVAL);
	pbus_uart_config_init(&bad);
	bad.baud_rate = 0;
	REQUIRE_EQ(pbus_uart_configure(u, &bad), -EINVAL);
	pbus_uart_config_init(&bad);
	bad.parity = (enum pbus_uart_parity)17;
	REQUIRE_EQ(pbus_uart_configure(u, &bad), -EINVAL);
	pbus_uart_close(u);
	close_pair();
}

static void bytes_both_ways_raw(void)
{
	REQUIRE_EQ(open_pair(), 0);
	struct pbus_uart *u = NULL;
	REQUIRE_EQ(pbus_uart_open(slave_path, NULL, 0, &u), 0);
	/* binary bytes, including the ones a cooked tty would eat */
	const uint8_t out[] = { 0x00, 0x03, 0x0a, 0x0d, 0x11, 0x13, 0x7f, 0xff };
	REQUIRE_EQ(pbus_uart_write(u, out, sizeof(out)), (int)sizeof(out));
	REQUIRE_EQ(pbus_uart_drain(u), 0);
	uint8_t in[16];
	size_t got = 0;
	while (got < sizeof(out)) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		REQUIRE(poll(&p, 1, 2000) == 1);
		ssize_t n = read(master, in + got, sizeof(in) - got);
		REQUIRE(n > 0);
		got += (size_t)n;
	}
	REQUIRE_EQ(got, sizeof(out));
	REQUIRE(memcmp(in, out, sizeof(out)) == 0);

	REQUIRE(write(master, out, sizeof(out)) == (ssize_t)sizeof(out));
	got = 0;
	while (got < sizeof(out)) {
		int n = pbus_uart_read_timeout(u, in + got, sizeof(in) - got, 2000);
		REQUIRE(n > 0);
		got += (size_t)n;
	}
	REQUIRE(memcmp(in, out, sizeof(out)) == 0);
	pbus_uart_close(u);
	close_pair();
}

static void timeouts_and_nonblocking(void)
{
	REQUIRE_EQ(open_pair(), 0);
	struct pbus_uart *u = NULL;
	REQUIRE_EQ(pbus_uart_open(slave_path, NULL, PBUS_UART_OPEN_NONBLOCK, &u), 0);
	uint8_t b[4];
	REQUIRE_EQ(pbus_uart_read(u, b, sizeof(b)), -EAGAIN);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	REQUIRE_EQ(pbus_uart_read_timeout(u, b, sizeof(b), 100), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	REQUIRE(ms >= 90);
	REQUIRE(fcntl(pbus_uart_get_fd(u), F_GETFL) & O_NONBLOCK);

	/* Blocking mode with VTIME: a read returns after 0.2 s with nothing. */
	REQUIRE_EQ(pbus_uart_set_nonblocking(u, false), 0);
	REQUIRE(!(fcntl(pbus_uart_get_fd(u), F_GETFL) & O_NONBLOCK));
	REQUIRE_EQ(pbus_uart_set_read_mode(u, 0, 2), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	REQUIRE_EQ(pbus_uart_read(u, b, sizeof(b)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	REQUIRE(ms >= 150);
	/* VMIN 3: a blocking read waits for three bytes */
	REQUIRE_EQ(pbus_uart_set_read_mode(u, 3, 0), 0);
	REQUIRE(write(master, "abc", 3) == 3);
	REQUIRE_EQ(pbus_uart_read(u, b, sizeof(b)), 3);

	/* Pending input, then flush. */
	REQUIRE(write(master, "xyz", 3) == 3);
	for (int i = 0; i < 100 && pbus_uart_get_input_pending(u) < 3; i++)
		usleep(1000);
	REQUIRE_EQ(pbus_uart_get_input_pending(u), 3);
	REQUIRE_EQ(pbus_uart_flush(u, PBUS_UART_QUEUE_INPUT), 0);
	REQUIRE_EQ(pbus_uart_get_input_pending(u), 0);
	REQUIRE_EQ(pbus_uart_flush(u, PBUS_UART_QUEUE_BOTH), 0);
	REQUIRE_EQ(pbus_uart_flush(u, (enum pbus_uart_queue)3), -EINVAL);
	REQUIRE(pbus_uart_get_output_pending(u) >= 0);
	pbus_uart_close(u);
	close_pair();
}

static void open_errors(void)
{
	struct pbus_uart *u = NULL;
	REQUIRE_EQ(pbus_uart_open("/dev/null", NULL, 0, &u), -ENOTTY);
	REQUIRE_EQ(pbus_uart_open("/dev/ttyNOPE", NULL, 0, &u), -ENOENT);
	REQUIRE_EQ(pbus_uart_open("/dev/null", NULL, 0x100, &u), -EINVAL);
	struct pbus_uart_config bad;
	pbus_uart_config_init(&bad);
	bad.data_bits = 4;
	REQUIRE_EQ(pbus_uart_open("/dev/null", &bad, 0, &u), -EINVAL);
	REQUIRE(u == NULL);
	REQUIRE_EQ(open_pair(), 0);
	REQUIRE_EQ(pbus_uart_open(slave_path, NULL, PBUS_UART_OPEN_EXCLUSIVE, &u), 0);
	pbus_uart_close(u);
	close_pair();
	pbus_uart_close(NULL);
}

int main(void)
{
	pbus_check_suite("hw/uart");
	RUN_CASE(arbitrary_baud_rates_exact);
	RUN_CASE(framing_and_flow_control);
	RUN_CASE(bytes_both_ways_raw);
	RUN_CASE(timeouts_and_nonblocking);
	RUN_CASE(open_errors);
	CHECK_EXIT();
}
