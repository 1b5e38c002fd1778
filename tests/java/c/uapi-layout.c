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
	SIZE(i2c_msg);
	OFF(i2c_msg, addr);
	OFF(i2c_msg, flags);
	OFF(i2c_msg, len);
	OFF(i2c_msg, buf);
	SIZE(i2c_rdwr_ioctl_data);
	OFF(i2c_rdwr_ioctl_data, msgs);
	OFF(i2c_rdwr_ioctl_data, nmsgs);
	SIZE(i2c_smbus_ioctl_data);
	OFF(i2c_smbus_ioctl_data, read_write);
	OFF(i2c_smbus_ioctl_data, command);
	/* OFF() would print the field "size" under the struct size's name */
	printf("i2c_smbus_ioctl_data_size_field %zu\n", offsetof(struct i2c_smbus_ioctl_data, size));
	OFF(i2c_smbus_ioctl_data, data);
	printf("i2c_smbus_data_size %zu\n", sizeof(union i2c_smbus_data));
	NUM(I2C_RETRIES);
	NUM(I2C_TIMEOUT);
	NUM(I2C_SLAVE);
	NUM(I2C_SLAVE_FORCE);
	NUM(I2C_TENBIT);
	NUM(I2C_FUNCS);
	NUM(I2C_RDWR);
	NUM(I2C_PEC);
	NUM(I2C_SMBUS);
	NUM(I2C_RDWR_IOCTL_MAX_MSGS);
	NUM(I2C_SMBUS_BLOCK_MAX);
	NUM(I2C_SMBUS_READ);
	NUM(I2C_SMBUS_WRITE);
	NUM(I2C_SMBUS_QUICK);
	NUM(I2C_SMBUS_BYTE);
	NUM(I2C_SMBUS_BYTE_DATA);
	NUM(I2C_SMBUS_WORD_DATA);
	NUM(I2C_SMBUS_PROC_CALL);
	NUM(I2C_SMBUS_BLOCK_DATA);
	NUM(I2C_SMBUS_BLOCK_PROC_CALL);
	NUM(I2C_SMBUS_I2C_BLOCK_DATA);
	NUM(I2C_M_RD);
	NUM(I2C_M_TEN);
	NUM(I2C_M_RECV_LEN);
	NUM(I2C_M_NO_RD_ACK);
	NUM(I2C_M_IGNORE_NAK);
	NUM(I2C_M_REV_DIR_ADDR);
	NUM(I2C_M_NOSTART);
	NUM(I2C_M_STOP);
	NUM(I2C_FUNC_I2C);
	NUM(I2C_FUNC_10BIT_ADDR);
	NUM(I2C_FUNC_PROTOCOL_MANGLING);
	NUM(I2C_FUNC_SMBUS_PEC);
	NUM(I2C_FUNC_NOSTART);
	NUM(I2C_FUNC_SLAVE);
	NUM(I2C_FUNC_SMBUS_BLOCK_PROC_CALL);
	NUM(I2C_FUNC_SMBUS_QUICK);
	NUM(I2C_FUNC_SMBUS_READ_BYTE);
	NUM(I2C_FUNC_SMBUS_WRITE_BYTE);
	NUM(I2C_FUNC_SMBUS_READ_BYTE_DATA);
	NUM(I2C_FUNC_SMBUS_WRITE_BYTE_DATA);
	NUM(I2C_FUNC_SMBUS_READ_WORD_DATA);
	NUM(I2C_FUNC_SMBUS_WRITE_WORD_DATA);
	NUM(I2C_FUNC_SMBUS_PROC_CALL);
	NUM(I2C_FUNC_SMBUS_READ_BLOCK_DATA);
	NUM(I2C_FUNC_SMBUS_WRITE_BLOCK_DATA);
	NUM(I2C_FUNC_SMBUS_READ_I2C_BLOCK);
	NUM(I2C_FUNC_SMBUS_WRITE_I2C_BLOCK);
	NUM(I2C_FUNC_SMBUS_HOST_NOTIFY);
}

static void spi(void)
{
	/* spi: spidev (linux/spi/spidev.h) */
	SIZE(spi_ioc_transfer);
	OFF(spi_ioc_transfer, tx_buf);
	OFF(spi_ioc_transfer, rx_buf);
	OFF(spi_ioc_transfer, len);
	OFF(spi_ioc_transfer, speed_hz);
	OFF(spi_ioc_transfer, delay_usecs);
	OFF(spi_ioc_transfer, bits_per_word);
	OFF(spi_ioc_transfer, cs_change);
	OFF(spi_ioc_transfer, tx_nbits);
	OFF(spi_ioc_transfer, rx_nbits);
	OFF(spi_ioc_transfer, word_delay_usecs);
	OFF(spi_ioc_transfer, pad);
	NUM(SPI_IOC_MAGIC);
	NUM(SPI_IOC_RD_MODE);
	NUM(SPI_IOC_WR_MODE);
	NUM(SPI_IOC_RD_LSB_FIRST);
	NUM(SPI_IOC_WR_LSB_FIRST);
	NUM(SPI_IOC_RD_BITS_PER_WORD);
	NUM(SPI_IOC_WR_BITS_PER_WORD);
	NUM(SPI_IOC_RD_MAX_SPEED_HZ);
	NUM(SPI_IOC_WR_MAX_SPEED_HZ);
	NUM(SPI_IOC_RD_MODE32);
	NUM(SPI_IOC_WR_MODE32);
	NUM(SPI_IOC_MESSAGE(1));
	NUM(SPI_IOC_MESSAGE(2));
	NUM(SPI_IOC_MESSAGE(42));
	NUM(SPI_IOC_MESSAGE(511));
	/* the largest n whose SPI_IOC_MESSAGE(n) encodes its size (512 gives size 0) */
	printf("spi_max_transfers %d\n", (int)((1 << _IOC_SIZEBITS) - 1) / (int)sizeof(struct spi_ioc_transfer));
	NUM(SPI_CPHA);
	NUM(SPI_CPOL);
	NUM(SPI_MODE_0);
	NUM(SPI_MODE_1);
	NUM(SPI_MODE_2);
	NUM(SPI_MODE_3);
	NUM(SPI_CS_HIGH);
	NUM(SPI_LSB_FIRST);
	NUM(SPI_3WIRE);
	NUM(SPI_LOOP);
	NUM(SPI_NO_CS);
	NUM(SPI_READY);
	NUM(SPI_TX_DUAL);
	NUM(SPI_TX_QUAD);
	NUM(SPI_RX_DUAL);
	NUM(SPI_RX_QUAD);
	NUM(SPI_CS_WORD);
	NUM(SPI_TX_OCTAL);
	NUM(SPI_RX_OCTAL);
	NUM(SPI_3WIRE_HIZ);
	NUM(SPI_RX_CPHA_FLIP);
}

/*
 * pwm: the PWM character device, Linux >= 6.13 (include/uapi/linux/pwm.h).
 * Debian 12's headers (6.1) predate it; when the installed headers lack it,
 * the struct and requests are the kernel's documented uAPI as libparambus-hw
 * writes them out (lib/hw/hw-internal.h), so that what this compares is the
 * C compiler's layout of __u32/__u64 and the kernel's own _IO/_IOWR/_IOW
 * encoding (linux/ioctl.h) against PwmChardev.java, not the kernel's header
 * itself.  (asm/ioctls.h: the tty ioctls of the uart section below.)
 */
#include <asm/ioctls.h>
#include <linux/ioctl.h>
#include <linux/types.h>
/* libparambus-hw's one copy of the constants the installed headers lack. */
#include "hw-internal.h"

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
