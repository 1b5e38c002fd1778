/* SPDX-License-Identifier: MIT */
/*
 * java-uapi-layout: the kernel uAPI the Java hardware layer (java/src/main/
 * java/io/parambus/hw/) declares by hand through the FFM API - struct sizes,
 * field offsets, ioctl request numbers, flags - as the system's uAPI headers
 * (linux-libc-dev) define them, one "NAME VALUE" a line, for the layout tests
 * (java/src/test/java/io/parambus/hw/, the ...LayoutTest classes) to compare.
 *
 *     java-uapi-layout SECTION     (gpio, i2c, spi, pwm, uart, sys)
 */
#include <asm/termbits.h>
#include <linux/gpio.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/spi/spidev.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <poll.h>

#define SIZE(t) printf(#t "_size %zu\n", sizeof(struct t))
#define OFF(t, f) printf(#t "_" #f " %zu\n", offsetof(struct t, f))
#define NUM(n) printf(#n " %lu\n", (unsigned long)(n))

static void sys(void)
{
	SIZE(epoll_event);
	OFF(epoll_event, data);
	SIZE(pollfd);
	OFF(pollfd, revents);
	NUM(EPOLL_CLOEXEC);
	NUM(EFD_CLOEXEC);
	NUM(EFD_NONBLOCK);
}

static void gpio(void)
{
	/* gpio: the GPIO character device v2 (linux/gpio.h) */
}

static void i2c(void)
{
	/* i2c: i2c-dev (linux/i2c-dev.h, linux/i2c.h) */
}

static void spi(void)
{
	/* spi: spidev (linux/spi/spidev.h) */
}

static void pwm(void)
{
	/* pwm: the PWM character device (not in these headers: see Pwm*.java) */
}

static void uart(void)
{
	/* uart: termios2 (asm/termbits.h) */
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*print)(void);
	} sections[] = {{"sys", sys}, {"gpio", gpio}, {"i2c", i2c}, {"spi", spi}, {"pwm", pwm}, {"uart", uart}};

	for (size_t i = 0; argc == 2 && i < sizeof(sections) / sizeof(sections[0]); i++) {
		if (strcmp(argv[1], sections[i].name) == 0) {
			sections[i].print();
			return 0;
		}
	}
	fprintf(stderr, "usage: java-uapi-layout sys|gpio|i2c|spi|pwm|uart\n");
	return 2;
}
