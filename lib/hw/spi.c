/* SPDX-License-Identifier: MIT */
/*
 * spi.c - SPI through spidev, with prepared messages.
 *
 * A plain transfer converts the caller's transfers into the kernel's
 * struct spi_ioc_transfer array on the stack and issues one
 * SPI_IOC_MESSAGE(N).  A prepared message does that conversion once: it owns
 * one allocation holding every transfer's buffers, keeps the kernel array
 * pointing into it, and computes the ioctl number, so that a run is the
 * ioctl alone.  spidev only reads the array (SPI_IOC_MESSAGE is _IOW), so it
 * stays valid from run to run.
 *
 * Messages longer than spidev's bufsiz are refused with -EMSGSIZE, never
 * split: see the chip-select discussion in <parambus/hw/spi.h>.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/spi/spidev.h>

#include "hw-internal.h"
#include "parambus/hw/spi.h"

#define SPIDEV_BUFSIZ_PATH "/sys/module/spidev/parameters/bufsiz"
#define SPIDEV_BUFSIZ_DEFAULT 4096u
#define BUFFER_ALIGN 64u /* a cache line: lets DMA-capable controllers map the buffers cleanly */

_Static_assert(sizeof(struct spi_ioc_transfer) == 32, "spi_ioc_transfer layout");

struct pbus_spi {
	int fd;
	uint32_t bufsiz;
};

struct pbus_spi_message {
	int fd;                /* copied from the device: one load less per run */
	unsigned long request; /* SPI_IOC_MESSAGE(num) */
	uint32_t num;
	uint8_t *block;        /* all buffers */
	struct spi_ioc_transfer transfers[];
};

/* SPI_IOC_MESSAGE(n) for a run-time n (the macro's char[] trick needs a
 * constant in C++ and a VLA in C; this is the same number). */
static unsigned long message_request(size_t n)
{
	return _IOC(_IOC_WRITE, SPI_IOC_MAGIC, 0, n * sizeof(struct spi_ioc_transfer));
}

uint32_t pbus_spi_read_bufsiz(void)
{
	uint64_t v;
	if (pbus_hw_read_file_u64(SPIDEV_BUFSIZ_PATH, &v) < 0 || v == 0 || v > UINT32_MAX)
		return SPIDEV_BUFSIZ_DEFAULT;
	return (uint32_t)v;
}

int pbus_spi_open(const char *path, struct pbus_spi **ret_spi)
{
	uint32_t mode;

	if (!path || !*path || !ret_spi)
		return -EINVAL;
	int fd = pbus_hw_open_device(path, SPI_IOC_RD_MODE32, &mode);
	if (fd < 0)
		return fd;
	struct pbus_spi *spi = calloc(1, sizeof(*spi));
	if (!spi) {
		close(fd);
		return -ENOMEM;
	}
	spi->fd = fd;
	spi->bufsiz = pbus_spi_read_bufsiz();
	*ret_spi = spi;
	return 0;
}

int pbus_spi_open_device(unsigned int bus, unsigned int chip_select, struct pbus_spi **ret_spi)
{
	char path[48];
	snprintf(path, sizeof(path), "/dev/spidev%u.%u", bus, chip_select);
	return pbus_spi_open(path, ret_spi);
}

void pbus_spi_close(struct pbus_spi *spi)
{
	if (!spi)
		return;
	close(spi->fd);
	free(spi);
}

int pbus_spi_get_fd(const struct pbus_spi *spi)
{
	return spi ? spi->fd : -EINVAL;
}

int pbus_spi_get_bufsiz(const struct pbus_spi *spi)
{
	return spi ? (int)spi->bufsiz : -EINVAL;
}

int pbus_spi_set_mode(struct pbus_spi *spi, uint32_t mode)
{
	if (!spi)
		return -EINVAL;
	int r = pbus_hw_ioctl(spi->fd, SPI_IOC_WR_MODE32, &mode);
	return r < 0 ? r : 0;
}

int pbus_spi_get_mode(struct pbus_spi *spi, uint32_t *ret_mode)
{
	uint32_t mode;
	if (!spi || !ret_mode)
		return -EINVAL;
	int r = pbus_hw_ioctl(spi->fd, SPI_IOC_RD_MODE32, &mode);
	if (r < 0)
		return r;
	*ret_mode = mode;
	return 0;
}

int pbus_spi_set_bits_per_word(struct pbus_spi *spi, uint8_t bits)
{
	if (!spi)
		return -EINVAL;
	int r = pbus_hw_ioctl(spi->fd, SPI_IOC_WR_BITS_PER_WORD, &bits);
	return r < 0 ? r : 0;
}

int pbus_spi_get_bits_per_word(struct pbus_spi *spi, uint8_t *ret_bits)
{
	uint8_t bits;
	if (!spi || !ret_bits)
		return -EINVAL;
	int r = pbus_hw_ioctl(spi->fd, SPI_IOC_RD_BITS_PER_WORD, &bits);
	if (r < 0)
		return r;
	*ret_bits = bits;
	return 0;
}

int pbus_spi_set_max_speed(struct pbus_spi *spi, uint32_t hz)
{
	if (!spi)
		return -EINVAL;
	int r = pbus_hw_ioctl(spi->fd, SPI_IOC_WR_MAX_SPEED_HZ, &hz);
	return r < 0 ? r : 0;
}

int pbus_spi_get_max_speed(struct pbus_spi *spi, uint32_t *ret_hz)
{
	uint32_t hz;
	if (!spi || !ret_hz)
		return -EINVAL;
	int r = pbus_hw_ioctl(spi->fd, SPI_IOC_RD_MAX_SPEED_HZ, &hz);
	if (r < 0)
		return r;
	*ret_hz = hz;
	return 0;
}

/* spidev's own rule: the TX lengths of a message add up to at most bufsiz,
 * and so do the RX lengths (the kernel also rounds each up to its DMA
 * alignment; if that pushes a message over, its -EMSGSIZE is passed on). */
static int check_totals(uint32_t bufsiz, uint64_t tx_total, uint64_t rx_total)
{
	return (tx_total > bufsiz || rx_total > bufsiz) ? -EMSGSIZE : 0;
}

int pbus_spi_transfer_message(struct pbus_spi *spi, const struct pbus_spi_transfer *transfers, size_t num)
{
	struct spi_ioc_transfer k[PBUS_SPI_TRANSFERS_MAX];
	uint64_t tx_total = 0, rx_total = 0;

	if (!spi || !transfers || num == 0 || num > PBUS_SPI_TRANSFERS_MAX)
		return -EINVAL;
	memset(k, 0, num * sizeof(k[0]));
	for (size_t i = 0; i < num; i++) {
		const struct pbus_spi_transfer *t = &transfers[i];
		if (t->length == 0)
			return -EINVAL;
		if (t->tx)
			tx_total += t->length;
		if (t->rx)
			rx_total += t->length;
		k[i].tx_buf = (uintptr_t)t->tx;
		k[i].rx_buf = (uintptr_t)t->rx;
		k[i].len = t->length;
		k[i].speed_hz = t->speed_hz;
		k[i].delay_usecs = t->delay_usecs;
		k[i].bits_per_word = t->bits_per_word;
		k[i].cs_change = t->cs_change;
		k[i].word_delay_usecs = t->word_delay_usecs;
		k[i].tx_nbits = t->tx_nbits;
		k[i].rx_nbits = t->rx_nbits;
	}
	int r = check_totals(spi->bufsiz, tx_total, rx_total);
	if (r < 0)
		return r;
	return pbus_hw_ioctl(spi->fd, message_request(num), k);
}

int pbus_spi_exchange(struct pbus_spi *spi, const void *tx, void *rx, size_t length)
{
	if (!tx || !rx || length == 0 || length > UINT32_MAX)
		return -EINVAL;
	struct pbus_spi_transfer t = { .tx = tx, .rx = rx, .length = (uint32_t)length };
	return pbus_spi_transfer_message(spi, &t, 1);
}

int pbus_spi_write_read(struct pbus_spi *spi, const void *tx, size_t write_length, void *rx,
			size_t read_length)
{
	if (!tx || !rx || write_length == 0 || read_length == 0 || write_length > UINT32_MAX ||
	    read_length > UINT32_MAX)
		return -EINVAL;
	struct pbus_spi_transfer t[2] = {
		{ .tx = tx, .length = (uint32_t)write_length },
		{ .rx = rx, .length = (uint32_t)read_length },
	};
	return pbus_spi_transfer_message(spi, t, 2);
}

int pbus_spi_write(struct pbus_spi *spi, const void *tx, size_t length)
{
	if (!tx || length == 0 || length > UINT32_MAX)
		return -EINVAL;
	struct pbus_spi_transfer t = { .tx = tx, .length = (uint32_t)length };
	return pbus_spi_transfer_message(spi, &t, 1);
}

int pbus_spi_read(struct pbus_spi *spi, void *rx, size_t length)
{
	if (!rx || length == 0 || length > UINT32_MAX)
		return -EINVAL;
	struct pbus_spi_transfer t = { .rx = rx, .length = (uint32_t)length };
	return pbus_spi_transfer_message(spi, &t, 1);
}

/* ---- prepared messages ------------------------------------------------ */

static size_t align_up(size_t v)
{
	return (v + BUFFER_ALIGN - 1) & ~(size_t)(BUFFER_ALIGN - 1);
}

int pbus_spi_message_new(struct pbus_spi *spi, const struct pbus_spi_message_transfer *transfers, size_t num,
			 struct pbus_spi_message **ret_message)
{
	uint64_t tx_total = 0, rx_total = 0;
	size_t block_size = 0;

	if (!spi || !transfers || !ret_message || num == 0 || num > PBUS_SPI_TRANSFERS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < num; i++) {
		const struct pbus_spi_message_transfer *t = &transfers[i];
		if (t->length == 0 || (t->flags & ~(uint32_t)(PBUS_SPI_MESSAGE_TX | PBUS_SPI_MESSAGE_RX)) ||
		    !(t->flags & (PBUS_SPI_MESSAGE_TX | PBUS_SPI_MESSAGE_RX)))
			return -EINVAL;
		if (t->flags & PBUS_SPI_MESSAGE_TX) {
			tx_total += t->length;
			block_size += align_up(t->length);
		}
		if (t->flags & PBUS_SPI_MESSAGE_RX) {
			rx_total += t->length;
			block_size += align_up(t->length);
		}
	}
	int r = check_totals(spi->bufsiz, tx_total, rx_total);
	if (r < 0)
		return r;

	struct pbus_spi_message *m = calloc(1, sizeof(*m) + num * sizeof(m->transfers[0]));
	if (!m)
		return -ENOMEM;
	if (posix_memalign((void **)&m->block, BUFFER_ALIGN, block_size) != 0) {
		free(m);
		return -ENOMEM;
	}
	memset(m->block, 0, block_size);
	m->fd = spi->fd;
	m->num = (uint32_t)num;
	m->request = message_request(num);

	uint8_t *p = m->block;
	for (size_t i = 0; i < num; i++) {
		const struct pbus_spi_message_transfer *t = &transfers[i];
		struct spi_ioc_transfer *k = &m->transfers[i];
		if (t->flags & PBUS_SPI_MESSAGE_TX) {
			if (t->tx_initial)
				memcpy(p, t->tx_initial, t->length);
			k->tx_buf = (uintptr_t)p;
			p += align_up(t->length);
		}
		if (t->flags & PBUS_SPI_MESSAGE_RX) {
			k->rx_buf = (uintptr_t)p;
			p += align_up(t->length);
		}
		k->len = t->length;
		k->speed_hz = t->speed_hz;
		k->delay_usecs = t->delay_usecs;
		k->bits_per_word = t->bits_per_word;
		k->cs_change = t->cs_change;
		k->word_delay_usecs = t->word_delay_usecs;
		k->tx_nbits = t->tx_nbits;
		k->rx_nbits = t->rx_nbits;
	}
	*ret_message = m;
	return 0;
}

void pbus_spi_message_free(struct pbus_spi_message *message)
{
	if (!message)
		return;
	free(message->block);
	free(message);
}

int pbus_spi_message_run(struct pbus_spi_message *message)
{
	if (!message)
		return -EINVAL;
	return pbus_hw_ioctl(message->fd, message->request, message->transfers);
}

void *pbus_spi_message_tx(struct pbus_spi_message *message, size_t index)
{
	if (!message || index >= message->num)
		return NULL;
	return (void *)(uintptr_t)message->transfers[index].tx_buf;
}

const void *pbus_spi_message_rx(const struct pbus_spi_message *message, size_t index)
{
	if (!message || index >= message->num)
		return NULL;
	return (const void *)(uintptr_t)message->transfers[index].rx_buf;
}

int pbus_spi_message_get_length(const struct pbus_spi_message *message, size_t index)
{
	if (!message || index >= message->num)
		return -EINVAL;
	return (int)message->transfers[index].len;
}
