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

/*
 * pwm: the PWM character device, Linux >= 6.13 (include/uapi/linux/pwm.h).
 * Debian 12's headers (6.1) predate it; when the installed headers lack it,
 * the struct and requests below are the kernel's documented uAPI written
 * out, so that what this compares is the C compiler's layout of __u32/__u64
 * and the kernel's own _IO/_IOWR/_IOW encoding (linux/ioctl.h) against
 * PwmChardev.java, not the kernel's header itself.  (asm/ioctls.h: the tty
 * ioctls of the uart section below.)
 */
#include <asm/ioctls.h>
#include <linux/ioctl.h>
#include <linux/types.h>
#if __has_include(<linux/pwm.h>)
#include <linux/pwm.h>
#endif
#ifndef PWM_IOCTL_REQUEST
struct pwmchip_waveform {
	__u32 hwpwm;
	__u32 __pad;
	__u64 period_length_ns;
	__u64 duty_length_ns;
	__u64 duty_offset_ns;
};
#define PWM_IOCTL_REQUEST _IO(0x75, 1)
#define PWM_IOCTL_FREE _IO(0x75, 2)
#define PWM_IOCTL_ROUNDWF _IOWR(0x75, 3, struct pwmchip_waveform)
#define PWM_IOCTL_GETWF _IOWR(0x75, 4, struct pwmchip_waveform)
#define PWM_IOCTL_SETROUNDEDWF _IOW(0x75, 5, struct pwmchip_waveform)
#define PWM_IOCTL_SETEXACTWF _IOW(0x75, 6, struct pwmchip_waveform)
#endif

static void pwm(void)
{
	SIZE(pwmchip_waveform);
	OFF(pwmchip_waveform, hwpwm);
	OFF(pwmchip_waveform, period_length_ns);
	OFF(pwmchip_waveform, duty_length_ns);
	OFF(pwmchip_waveform, duty_offset_ns);
	NUM(PWM_IOCTL_REQUEST);
	NUM(PWM_IOCTL_FREE);
	NUM(PWM_IOCTL_ROUNDWF);
	NUM(PWM_IOCTL_GETWF);
	NUM(PWM_IOCTL_SETROUNDEDWF);
	NUM(PWM_IOCTL_SETEXACTWF);
}

static void uart(void)
{
	/* uart: termios2 (asm/termbits.h), the tty ioctls (asm/ioctls.h) */
	SIZE(termios2);
	OFF(termios2, c_iflag);
	OFF(termios2, c_oflag);
	OFF(termios2, c_cflag);
	OFF(termios2, c_lflag);
	OFF(termios2, c_line);
	OFF(termios2, c_cc);
	OFF(termios2, c_ispeed);
	OFF(termios2, c_ospeed);
	NUM(NCCS);
	NUM(VTIME);
	NUM(VMIN);
	NUM(TCGETS2);
	NUM(TCSETS2);
	NUM(TCSBRK);
	NUM(TCFLSH);
	NUM(TIOCEXCL);
	NUM(TIOCNXCL);
	NUM(TIOCOUTQ);
	NUM(FIONREAD);
	NUM(TIOCSBRK);
	NUM(TIOCCBRK);
	NUM(TIOCGPTN);
	NUM(TIOCSPTLCK);
	NUM(TCIFLUSH);
	NUM(TCOFLUSH);
	NUM(TCIOFLUSH);
	/* c_iflag */
	NUM(IGNBRK);
	NUM(BRKINT);
	NUM(IGNPAR);
	NUM(PARMRK);
	NUM(INPCK);
	NUM(ISTRIP);
	NUM(INLCR);
	NUM(IGNCR);
	NUM(ICRNL);
	NUM(IUCLC);
	NUM(IXON);
	NUM(IXANY);
	NUM(IXOFF);
	NUM(IMAXBEL);
	/* c_oflag */
	NUM(OPOST);
	/* c_cflag */
	NUM(CBAUD);
	NUM(BOTHER);
	NUM(IBSHIFT);
	NUM(CSIZE);
	NUM(CS5);
	NUM(CS6);
	NUM(CS7);
	NUM(CS8);
	NUM(CSTOPB);
	NUM(CREAD);
	NUM(PARENB);
	NUM(PARODD);
	NUM(CLOCAL);
	NUM(CMSPAR);
	NUM(CRTSCTS);
	/* c_lflag */
	NUM(ISIG);
	NUM(ICANON);
	NUM(ECHO);
	NUM(ECHOE);
	NUM(ECHOK);
	NUM(ECHONL);
	NUM(IEXTEN);
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
