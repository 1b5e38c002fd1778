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
#include <sys/ioctl.h>
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
	NUM(GPIO_MAX_NAME_SIZE);
	NUM(GPIO_V2_LINES_MAX);
	NUM(GPIO_V2_LINE_NUM_ATTRS_MAX);
	SIZE(gpiochip_info);
	OFF(gpiochip_info, name);
	OFF(gpiochip_info, label);
	OFF(gpiochip_info, lines);
	SIZE(gpio_v2_line_attribute);
	OFF(gpio_v2_line_attribute, id);
	OFF(gpio_v2_line_attribute, flags);
	OFF(gpio_v2_line_attribute, values);
	OFF(gpio_v2_line_attribute, debounce_period_us);
	SIZE(gpio_v2_line_config_attribute);
	OFF(gpio_v2_line_config_attribute, attr);
	OFF(gpio_v2_line_config_attribute, mask);
	SIZE(gpio_v2_line_config);
	OFF(gpio_v2_line_config, flags);
	OFF(gpio_v2_line_config, num_attrs);
	OFF(gpio_v2_line_config, attrs);
	SIZE(gpio_v2_line_request);
	OFF(gpio_v2_line_request, offsets);
	OFF(gpio_v2_line_request, consumer);
	OFF(gpio_v2_line_request, config);
	OFF(gpio_v2_line_request, num_lines);
	OFF(gpio_v2_line_request, event_buffer_size);
	OFF(gpio_v2_line_request, fd);
	SIZE(gpio_v2_line_info);
	OFF(gpio_v2_line_info, name);
	OFF(gpio_v2_line_info, consumer);
	OFF(gpio_v2_line_info, offset);
	OFF(gpio_v2_line_info, num_attrs);
	OFF(gpio_v2_line_info, flags);
	OFF(gpio_v2_line_info, attrs);
	SIZE(gpio_v2_line_info_changed);
	OFF(gpio_v2_line_info_changed, info);
	OFF(gpio_v2_line_info_changed, timestamp_ns);
	OFF(gpio_v2_line_info_changed, event_type);
	SIZE(gpio_v2_line_values);
	OFF(gpio_v2_line_values, bits);
	OFF(gpio_v2_line_values, mask);
	SIZE(gpio_v2_line_event);
	OFF(gpio_v2_line_event, timestamp_ns);
	OFF(gpio_v2_line_event, id);
	OFF(gpio_v2_line_event, offset);
	OFF(gpio_v2_line_event, seqno);
	OFF(gpio_v2_line_event, line_seqno);
	NUM(GPIO_V2_LINE_FLAG_USED);
	NUM(GPIO_V2_LINE_FLAG_ACTIVE_LOW);
	NUM(GPIO_V2_LINE_FLAG_INPUT);
	NUM(GPIO_V2_LINE_FLAG_OUTPUT);
	NUM(GPIO_V2_LINE_FLAG_EDGE_RISING);
	NUM(GPIO_V2_LINE_FLAG_EDGE_FALLING);
	NUM(GPIO_V2_LINE_FLAG_OPEN_DRAIN);
	NUM(GPIO_V2_LINE_FLAG_OPEN_SOURCE);
	NUM(GPIO_V2_LINE_FLAG_BIAS_PULL_UP);
	NUM(GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN);
	NUM(GPIO_V2_LINE_FLAG_BIAS_DISABLED);
	NUM(GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME);
	NUM(GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE);
	NUM(GPIO_V2_LINE_ATTR_ID_FLAGS);
	NUM(GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES);
	NUM(GPIO_V2_LINE_ATTR_ID_DEBOUNCE);
	NUM(GPIO_V2_LINE_EVENT_RISING_EDGE);
	NUM(GPIO_V2_LINE_EVENT_FALLING_EDGE);
	NUM(GPIO_V2_LINE_CHANGED_REQUESTED);
	NUM(GPIO_V2_LINE_CHANGED_RELEASED);
	NUM(GPIO_V2_LINE_CHANGED_CONFIG);
	NUM(GPIO_GET_CHIPINFO_IOCTL);
	NUM(GPIO_GET_LINEINFO_UNWATCH_IOCTL);
	NUM(GPIO_V2_GET_LINEINFO_IOCTL);
	NUM(GPIO_V2_GET_LINEINFO_WATCH_IOCTL);
	NUM(GPIO_V2_GET_LINE_IOCTL);
	NUM(GPIO_V2_LINE_SET_CONFIG_IOCTL);
	NUM(GPIO_V2_LINE_GET_VALUES_IOCTL);
	NUM(GPIO_V2_LINE_SET_VALUES_IOCTL);
	NUM(FIONBIO);
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
