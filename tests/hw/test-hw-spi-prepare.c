/* SPDX-License-Identifier: MIT */
/*
 * test-hw-spi-prepare.c - SPI message building without a device.
 *
 * /dev/null stands in for a spidev node and the ioctl test hook records the
 * SPI_IOC_MESSAGE calls (the host has no SPI controller; the VM suite runs
 * the same code against the project's loopback controller).  Checked: the
 * prepared message's kernel array points into buffers the message owns,
 * carries every per-transfer setting, is issued unchanged by every run with
 * the right ioctl number, and a run allocates nothing; bufsiz is enforced
 * before any ioctl; write-then-read is two transfers in one message.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include <linux/spi/spidev.h>

#include "alloc-count.h"
#include "hw-internal.h"
#include "pbus-check.h"
#include "parambus/hw/spi.h"

static struct {
	int calls;
	unsigned long request;
	const void *arg;
	struct spi_ioc_transfer xfers[PBUS_SPI_TRANSFERS_MAX];
	size_t num;
} fake;

static int fake_spidev(int fd, unsigned long request, void *arg, void *userdata, bool *handled)
{
	(void)fd;
	(void)userdata;
	*handled = true;
	if (request == SPI_IOC_RD_MODE32) {
		*(uint32_t *)arg = 0;
		return 0;
	}
	if (_IOC_TYPE(request) == SPI_IOC_MAGIC && _IOC_NR(request) == 0 && _IOC_DIR(request) == _IOC_WRITE) {
		fake.calls++;
		fake.request = request;
		fake.arg = arg;
		fake.num = _IOC_SIZE(request) / sizeof(struct spi_ioc_transfer);
		memcpy(fake.xfers, arg, _IOC_SIZE(request));
		/* a loopback, like the VM's mock controller */
		uint32_t total = 0;
		for (size_t i = 0; i < fake.num; i++) {
			struct spi_ioc_transfer *t = &fake.xfers[i];
			if (t->rx_buf && t->tx_buf)
				memcpy((void *)(uintptr_t)t->rx_buf, (const void *)(uintptr_t)t->tx_buf, t->len);
			else if (t->rx_buf)
				memset((void *)(uintptr_t)t->rx_buf, 0xff, t->len);
			total += t->len;
		}
		return (int)total;
	}
	*handled = false;
	return 0;
}

static struct pbus_spi *open_fake(void)
{
	struct pbus_spi *spi = NULL;
	memset(&fake, 0, sizeof(fake));
	pbus_hw_set_ioctl_hook(fake_spidev, NULL);
	if (pbus_spi_open("/dev/null", &spi) < 0)
		return NULL;
	return spi;
}

static void close_fake(struct pbus_spi *spi)
{
	pbus_spi_close(spi);
	pbus_hw_set_ioctl_hook(NULL, NULL);
}

static void prepared_message_layout(void)
{
	struct pbus_spi *spi = open_fake();
	REQUIRE(spi);
	static const uint8_t cmd[3] = { 0x0b, 0x12, 0x34 };
	struct pbus_spi_message_transfer t[3] = {
		{ .length = 3, .flags = PBUS_SPI_MESSAGE_TX, .tx_initial = cmd, .speed_hz = 500000,
		  .delay_usecs = 10, .bits_per_word = 8, .cs_change = 0 },
		{ .length = 24, .flags = PBUS_SPI_MESSAGE_RX, .speed_hz = 1000000, .word_delay_usecs = 2,
		  .rx_nbits = 2 },
		{ .length = 5, .flags = PBUS_SPI_MESSAGE_TX | PBUS_SPI_MESSAGE_RX, .cs_change = 1, .tx_nbits = 4,
		  .bits_per_word = 16 },
	};
	struct pbus_spi_message *m = NULL;
	REQUIRE_EQ(pbus_spi_message_new(spi, t, 3, &m), 0);
	REQUIRE(pbus_spi_message_tx(m, 0) != NULL);
	REQUIRE(pbus_spi_message_rx(m, 0) == NULL);
	REQUIRE(pbus_spi_message_tx(m, 1) == NULL);
	REQUIRE(pbus_spi_message_rx(m, 1) != NULL);
	REQUIRE(pbus_spi_message_tx(m, 2) != NULL && pbus_spi_message_rx(m, 2) != NULL);
	REQUIRE(pbus_spi_message_tx(m, 3) == NULL);
	REQUIRE(memcmp(pbus_spi_message_tx(m, 0), cmd, 3) == 0);
	REQUIRE_EQ(pbus_spi_message_get_length(m, 1), 24);
	REQUIRE_EQ(pbus_spi_message_get_length(m, 3), -EINVAL);

	memcpy(pbus_spi_message_tx(m, 2), "hello", 5);
	REQUIRE_EQ(pbus_spi_message_run(m), 32);
	REQUIRE_EQ(fake.calls, 1);
	REQUIRE_EQ(fake.request, SPI_IOC_MESSAGE(3));
	REQUIRE_EQ(fake.num, 3);
	REQUIRE_EQ(fake.xfers[0].tx_buf, (uintptr_t)pbus_spi_message_tx(m, 0));
	REQUIRE_EQ(fake.xfers[0].rx_buf, 0);
	REQUIRE_EQ(fake.xfers[0].len, 3);
	REQUIRE_EQ(fake.xfers[0].speed_hz, 500000);
	REQUIRE_EQ(fake.xfers[0].delay_usecs, 10);
	REQUIRE_EQ(fake.xfers[0].bits_per_word, 8);
	REQUIRE_EQ(fake.xfers[1].tx_buf, 0);
	REQUIRE_EQ(fake.xfers[1].rx_buf, (uintptr_t)pbus_spi_message_rx(m, 1));
	REQUIRE_EQ(fake.xfers[1].word_delay_usecs, 2);
	REQUIRE_EQ(fake.xfers[1].rx_nbits, 2);
	REQUIRE_EQ(fake.xfers[2].cs_change, 1);
	REQUIRE_EQ(fake.xfers[2].tx_nbits, 4);
	REQUIRE_EQ(fake.xfers[2].bits_per_word, 16);
	REQUIRE(memcmp(pbus_spi_message_rx(m, 2), "hello", 5) == 0);
	REQUIRE(((const uint8_t *)pbus_spi_message_rx(m, 1))[23] == 0xff);
	/* Buffers never overlap. */
	uintptr_t a = (uintptr_t)pbus_spi_message_rx(m, 1), b = (uintptr_t)pbus_spi_message_tx(m, 2);
	REQUIRE(a + 24 <= b || b + 5 <= a);

	/* Runs reuse the very same array: no rebuild, no allocation. */
	const void *first_arg = fake.arg;
	alloc_count = 0;
	alloc_counting = 1;
	for (int i = 0; i < 1000; i++)
		pbus_spi_message_run(m);
	alloc_counting = 0;
	REQUIRE_EQ(alloc_count, 0);
	REQUIRE_EQ(fake.calls, 1001);
	REQUIRE(fake.arg == first_arg);

	pbus_spi_message_free(m);
	close_fake(spi);
}

static void prepare_argument_checks(void)
{
	struct pbus_spi *spi = open_fake();
	REQUIRE(spi);
	struct pbus_spi_message *m = NULL;
	struct pbus_spi_message_transfer t = { .length = 4, .flags = 0 };
	REQUIRE_EQ(pbus_spi_message_new(spi, &t, 1, &m), -EINVAL); /* neither TX nor RX */
	t.flags = 0x80 | PBUS_SPI_MESSAGE_TX;
	REQUIRE_EQ(pbus_spi_message_new(spi, &t, 1, &m), -EINVAL);
	t.flags = PBUS_SPI_MESSAGE_TX;
	t.length = 0;
	REQUIRE_EQ(pbus_spi_message_new(spi, &t, 1, &m), -EINVAL);
	t.length = 4;
	REQUIRE_EQ(pbus_spi_message_new(spi, &t, 0, &m), -EINVAL);
	REQUIRE_EQ(pbus_spi_message_new(spi, &t, PBUS_SPI_TRANSFERS_MAX + 1, &m), -EINVAL);
	REQUIRE_EQ(pbus_spi_message_new(NULL, &t, 1, &m), -EINVAL);
	REQUIRE(m == NULL);
	REQUIRE_EQ(pbus_spi_message_run(NULL), -EINVAL);
	REQUIRE(pbus_spi_message_tx(NULL, 0) == NULL);
	pbus_spi_message_free(NULL);
	REQUIRE_EQ(fake.calls, 0);
	close_fake(spi);
}

static void bufsiz_refused_not_split(void)
{
	struct pbus_spi *spi = open_fake();
	REQUIRE(spi);
	int bufsiz = pbus_spi_get_bufsiz(spi);
	REQUIRE(bufsiz > 0);
	REQUIRE_EQ((uint32_t)bufsiz, pbus_spi_read_bufsiz());
	uint8_t *buf = calloc(1, (size_t)bufsiz + 1);
	REQUIRE(buf);

	/* exactly bufsiz: fine; one more: refused before any ioctl */
	REQUIRE_EQ(pbus_spi_exchange(spi, buf, buf, (size_t)bufsiz), bufsiz);
	REQUIRE_EQ(fake.calls, 1);
	REQUIRE_EQ(pbus_spi_exchange(spi, buf, buf, (size_t)bufsiz + 1), -EMSGSIZE);
	REQUIRE_EQ(fake.calls, 1);
	/* the totals count, not single transfers */
	struct pbus_spi_transfer two[2] = { { .tx = buf, .length = (uint32_t)bufsiz / 2 + 1 },
					    { .tx = buf, .length = (uint32_t)bufsiz / 2 } };
	REQUIRE_EQ(pbus_spi_transfer_message(spi, two, 2), -EMSGSIZE);
	/* TX and RX are counted separately, like spidev's two bounce buffers */
	two[1].tx = NULL;
	two[1].rx = buf;
	REQUIRE_EQ(pbus_spi_transfer_message(spi, two, 2), bufsiz + 1);
	REQUIRE_EQ(fake.calls, 2);

	struct pbus_spi_message *m = NULL;
	struct pbus_spi_message_transfer t = { .length = (uint32_t)bufsiz + 1, .flags = PBUS_SPI_MESSAGE_RX };
	REQUIRE_EQ(pbus_spi_message_new(spi, &t, 1, &m), -EMSGSIZE);
	REQUIRE(m == NULL);
	free(buf);
	close_fake(spi);
}

static void write_then_read_is_one_message(void)
{
	struct pbus_spi *spi = open_fake();
	REQUIRE(spi);
	uint8_t cmd[2] = { 0x9f, 0x00 }, id[3] = { 0 };
	REQUIRE_EQ(pbus_spi_write_read(spi, cmd, 2, id, 3), 5);
	REQUIRE_EQ(fake.calls, 1);
	REQUIRE_EQ(fake.request, SPI_IOC_MESSAGE(2));
	REQUIRE(fake.xfers[0].tx_buf == (uintptr_t)cmd && fake.xfers[0].rx_buf == 0 && fake.xfers[0].len == 2);
	REQUIRE(fake.xfers[1].tx_buf == 0 && fake.xfers[1].rx_buf == (uintptr_t)id && fake.xfers[1].len == 3);
	REQUIRE(fake.xfers[0].cs_change == 0); /* chip select held across both */

	/* Several buffers, each keeping its own settings. */
	uint8_t a[4] = { 1, 2, 3, 4 }, ra[4], b[2] = { 5, 6 }, rb[2];
	struct pbus_spi_transfer x[2] = {
		{ .tx = a, .rx = ra, .length = 4, .speed_hz = 100000, .delay_usecs = 3 },
		{ .tx = b, .rx = rb, .length = 2, .bits_per_word = 16, .cs_change = 1 },
	};
	REQUIRE_EQ(pbus_spi_transfer_message(spi, x, 2), 6);
	REQUIRE(memcmp(ra, a, 4) == 0 && memcmp(rb, b, 2) == 0);
	REQUIRE(fake.xfers[0].speed_hz == 100000 && fake.xfers[0].delay_usecs == 3);
	REQUIRE(fake.xfers[1].bits_per_word == 16 && fake.xfers[1].cs_change == 1);

	/* transfer() keeps its array on the stack: no allocation either */
	alloc_count = 0;
	alloc_counting = 1;
	for (int i = 0; i < 100; i++)
		pbus_spi_transfer_message(spi, x, 2);
	alloc_counting = 0;
	REQUIRE_EQ(alloc_count, 0);
	REQUIRE_EQ(pbus_spi_transfer_message(spi, x, 0), -EINVAL);
	REQUIRE_EQ(pbus_spi_transfer_message(spi, x, PBUS_SPI_TRANSFERS_MAX + 1), -EINVAL);
	close_fake(spi);
}

static void errors_pass_through(void)
{
	struct pbus_spi *spi = NULL;
	REQUIRE_EQ(pbus_spi_open("/dev/null", &spi), -ENOTTY); /* real ioctl, no hook */
	REQUIRE_EQ(pbus_spi_open("/dev/spidev-nonexistent", &spi), -ENOENT);
	REQUIRE_EQ(pbus_spi_open_device(4711, 0, &spi), -ENOENT);
	REQUIRE(spi == NULL);
	uint32_t mode = 0;
	REQUIRE_EQ(pbus_spi_get_mode(NULL, &mode), -EINVAL);
	REQUIRE_EQ(pbus_spi_set_mode(NULL, 0), -EINVAL);
}

int main(void)
{
	pbus_check_suite("hw/spi");
	RUN_CASE(prepared_message_layout);
	RUN_CASE(prepare_argument_checks);
	RUN_CASE(bufsiz_refused_not_split);
	RUN_CASE(write_then_read_is_one_message);
	RUN_CASE(errors_pass_through);
	CHECK_EXIT();
}
