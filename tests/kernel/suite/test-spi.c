/* SPDX-License-Identifier: MIT */
/*
 * test-spi.c - libparambus-hw SPI against the project's loopback controller
 * (pbus-mock-spi, bus 0, /dev/spidev0.0 and 0.1, ENVIRONMENT.md section 5).
 *
 * The controller echoes tx into rx (0xff without tx) and logs every message,
 * transfer and chip-select change to debugfs, so settings, grouping into
 * messages and CS behaviour are checked on the "wire".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/spi/spidev.h>

#include "common/suite.h"
#include "parambus/hw/spi.h"

#define DBG "/sys/kernel/debug/pbus-mock-spi"
#define SPIDEV_DRV "/sys/bus/spi/drivers/spidev"

/* Mode, word size and speed belong to the device, not to the handle:
 * start every case from the same settings, whatever the last one left. */
static struct pbus_spi *open0(void)
{
	struct pbus_spi *spi = NULL;
	if (pbus_spi_open("/dev/spidev0.0", &spi) < 0)
		return NULL;
	if (pbus_spi_set_mode(spi, PBUS_SPI_MODE_0) < 0 || pbus_spi_set_bits_per_word(spi, 8) < 0 ||
	    pbus_spi_set_max_speed(spi, 10000000) < 0) {
		pbus_spi_close(spi);
		return NULL;
	}
	return spi;
}

static void clear_log(void)
{
	kenv_write_file(DBG "/log", "x");
}

static const char *last_message(void)
{
	return suite_read(DBG "/last_message");
}

static const char *open_and_defaults(void)
{
	struct pbus_spi *spi = NULL;
	T_EQ(pbus_spi_open_device(0, 0, &spi), 0);
	T_EQ(pbus_spi_get_bufsiz(spi), 4096);
	T_EXPECT(fcntl(pbus_spi_get_fd(spi), F_GETFD) & FD_CLOEXEC);
	uint32_t hz = 0;
	T_EQ(pbus_spi_get_max_speed(spi, &hz), 0);
	T_EQ(hz, 10000000);
	pbus_spi_close(spi);
	spi = NULL;
	T_EQ(pbus_spi_open("/dev/spidev1.0", &spi), -ENOENT);
	T_EQ(pbus_spi_open("/dev/null", &spi), -ENOTTY);
	T_EXPECT(spi == NULL);
	return NULL;
}

static const char *mode32_bits_speed(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	/* bits above the first byte need the 32-bit mode ioctl */
	const uint32_t mode = PBUS_SPI_MODE_3 | PBUS_SPI_LSB_FIRST | PBUS_SPI_TX_QUAD | PBUS_SPI_RX_QUAD;
	T_EQ(pbus_spi_set_mode(spi, mode), 0);
	uint32_t got = 0;
	T_EQ(pbus_spi_get_mode(spi, &got), 0);
	T_EQ(got, mode);
	T_EQ(pbus_spi_set_mode(spi, PBUS_SPI_MODE_0 | PBUS_SPI_READY), -EINVAL); /* the controller lacks it */
	T_EQ(pbus_spi_set_mode(spi, PBUS_SPI_3WIRE_HIZ), -EINVAL); /* 6.1's spidev does not pass it on */
	T_EQ(pbus_spi_set_mode(spi, PBUS_SPI_TX_DUAL | PBUS_SPI_TX_QUAD), -EINVAL); /* contradictory */
	T_EQ(pbus_spi_get_mode(spi, &got), 0);
	T_EQ(got, mode); /* unchanged */
	T_EQ(pbus_spi_set_bits_per_word(spi, 16), 0);
	uint8_t bits = 0;
	T_EQ(pbus_spi_get_bits_per_word(spi, &bits), 0);
	T_EQ(bits, 16);
	T_EQ(pbus_spi_set_bits_per_word(spi, 3), -EINVAL);
	T_EQ(pbus_spi_set_max_speed(spi, 2000000), 0);
	uint32_t hz = 0;
	T_EQ(pbus_spi_get_max_speed(spi, &hz), 0);
	T_EQ(hz, 2000000);

	clear_log();
	uint8_t tx[4] = { 1, 2, 3, 4 }, rx[4];
	T_EQ(pbus_spi_exchange(spi, tx, rx, 4), 4);
	const char *log = last_message();
	T_EXPECT(log);
	/* 6.1's spidev keeps the speed set by SPI_IOC_WR_MAX_SPEED_HZ as its
	 * default transfer speed (the device's max_speed_hz stays) */
	if (!strstr(log, "mode=0x00000a0b") || !strstr(log, "speed=2000000 bpw=16"))
		T_FAIL("settings not on the wire: %.300s", log);
	pbus_spi_close(spi);
	return NULL;
}

static const char *exchange_loopback(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	uint8_t tx[64], rx[64];
	for (int i = 0; i < 64; i++)
		tx[i] = (uint8_t)(i * 7 + 1);
	T_EQ(pbus_spi_exchange(spi, tx, rx, 64), 64);
	T_EXPECT(memcmp(tx, rx, 64) == 0);
	/* in place */
	memcpy(rx, tx, 64);
	T_EQ(pbus_spi_exchange(spi, rx, rx, 64), 64);
	T_EXPECT(memcmp(tx, rx, 64) == 0);
	T_EQ(pbus_spi_write(spi, tx, 8), 8);
	memset(rx, 0, sizeof(rx));
	T_EQ(pbus_spi_read(spi, rx, 8), 8);
	for (int i = 0; i < 8; i++)
		T_EQ(rx[i], 0xff);
	pbus_spi_close(spi);
	return NULL;
}

static const char *write_then_read_one_chip_select(void)
{
	/* Pi4J: "SPI write-then-read missing".  Two transfers, one message,
	 * chip select asserted once around both. */
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	clear_log();
	const uint8_t cmd[3] = { 0x0a, 0x0b, 0x0c };
	uint8_t answer[5] = { 0 };
	T_EQ(pbus_spi_write_read(spi, cmd, 3, answer, 5), 8);
	for (int i = 0; i < 5; i++)
		T_EQ(answer[i], 0xff); /* the loopback has nothing to echo in the read phase */
	const char *log = last_message();
	T_EXPECT(log);
	T_EXPECT(strstr(log, "ntransfers=2"));
	T_EQ(suite_count(log, "xfer "), 2);
	T_EXPECT(strstr(log, "idx=0") && strstr(log, "tx=0a0b0c"));
	T_EQ(suite_count(log, "cs cs=0 level=0"), 1); /* selected once */
	T_EQ(suite_count(log, "cs cs=0 level=1"), 1); /* released once */
	pbus_spi_close(spi);
	return NULL;
}

static const char *multi_buffer_per_transfer_settings(void)
{
	/* Pi4J: "multi-buffer transfers broken".  Three buffers in one
	 * message, each with its own speed, delay, word size and cs_change. */
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	T_EQ(pbus_spi_set_mode(spi, PBUS_SPI_MODE_0), 0);
	T_EQ(pbus_spi_set_bits_per_word(spi, 8), 0);
	clear_log();
	uint8_t a[3] = { 0x11, 0x22, 0x33 }, ra[3], b[4] = { 0x44, 0x55, 0x66, 0x77 }, rb[4], c[2] = { 0x88, 0x99 },
		rc[2];
	struct pbus_spi_transfer t[3] = {
		{ .tx = a, .rx = ra, .length = 3, .speed_hz = 500000, .delay_usecs = 10, .cs_change = 1 },
		{ .tx = b, .rx = rb, .length = 4, .speed_hz = 1000000, .bits_per_word = 16, .word_delay_usecs = 2 },
		{ .tx = c, .rx = rc, .length = 2, .delay_usecs = 5 },
	};
	T_EQ(pbus_spi_transfer_message(spi, t, 3), 9);
	T_EXPECT(memcmp(a, ra, 3) == 0 && memcmp(b, rb, 4) == 0 && memcmp(c, rc, 2) == 0);
	const char *log = last_message();
	T_EXPECT(log);
	T_EXPECT(strstr(log, "ntransfers=3"));
	T_EXPECT(strstr(log, "idx=0 cs=0 mode=0x00000000 max_speed=10000000 speed=500000 bpw=8 len=3"));
	T_EXPECT(strstr(log, "idx=1 cs=0 mode=0x00000000 max_speed=10000000 speed=1000000 bpw=16 len=4"));
	T_EXPECT(strstr(log, "idx=2 cs=0 mode=0x00000000 max_speed=10000000 speed=10000000 bpw=8 len=2"));
	T_EXPECT(strstr(log, "cs_change=1 delay=10us"));
	T_EXPECT(strstr(log, "word_delay=2us"));
	T_EXPECT(strstr(log, "delay=5us"));
	T_EXPECT(strstr(log, "tx=44556677"));
	/* cs_change after transfer 0: CS released and re-asserted mid-message */
	T_EQ(suite_count(log, "cs cs=0 level=0"), 2);
	T_EQ(suite_count(log, "cs cs=0 level=1"), 2);
	pbus_spi_close(spi);
	return NULL;
}

static const char *dual_quad_nbits(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	T_EQ(pbus_spi_set_mode(spi, PBUS_SPI_TX_QUAD | PBUS_SPI_RX_DUAL), 0);
	clear_log();
	uint8_t tx[4] = { 1, 2, 3, 4 }, rx[4];
	struct pbus_spi_transfer t[2] = { { .tx = tx, .length = 4, .tx_nbits = 4 },
					  { .rx = rx, .length = 4, .rx_nbits = 2 } };
	T_EQ(pbus_spi_transfer_message(spi, t, 2), 8);
	const char *log = last_message();
	T_EXPECT(log && strstr(log, "tx_nbits=4") && strstr(log, "rx_nbits=2"));
	pbus_spi_close(spi);
	return NULL;
}

static const char *prepared_message_runs(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	static const uint8_t cmd[2] = { 0x03, 0x00 };
	struct pbus_spi_message_transfer t[2] = {
		{ .length = 2, .flags = PBUS_SPI_MESSAGE_TX, .tx_initial = cmd, .speed_hz = 4000000 },
		{ .length = 24, .flags = PBUS_SPI_MESSAGE_TX | PBUS_SPI_MESSAGE_RX, .delay_usecs = 1 },
	};
	struct pbus_spi_message *m = NULL;
	T_EQ(pbus_spi_message_new(spi, t, 2, &m), 0);
	uint8_t *tx = pbus_spi_message_tx(m, 1);
	const uint8_t *rx = pbus_spi_message_rx(m, 1);
	T_EXPECT(tx && rx);
	for (int run = 0; run < 200; run++) {
		for (int i = 0; i < 24; i++)
			tx[i] = (uint8_t)(run + i);
		T_EQ(pbus_spi_message_run(m), 26);
		for (int i = 0; i < 24; i++)
			if (rx[i] != (uint8_t)(run + i))
				T_FAIL("run %d byte %d: %02x", run, i, rx[i]);
	}
	const char *log = last_message();
	T_EXPECT(log && strstr(log, "ntransfers=2") && strstr(log, "speed=4000000") && strstr(log, "tx=0300"));
	pbus_spi_message_free(m);
	pbus_spi_close(spi);
	return NULL;
}

static const char *oversized_refused(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	uint8_t *buf = calloc(1, 8192);
	T_EXPECT(buf);
	T_EQ(pbus_spi_exchange(spi, buf, buf, 4096), 4096);
	T_EQ(pbus_spi_exchange(spi, buf, buf, 4097), -EMSGSIZE);
	struct pbus_spi_transfer two[2] = { { .tx = buf, .length = 3000 }, { .tx = buf + 3000, .length = 1200 } };
	T_EQ(pbus_spi_transfer_message(spi, two, 2), -EMSGSIZE);
	struct pbus_spi_message *m = NULL;
	struct pbus_spi_message_transfer mt = { .length = 5000, .flags = PBUS_SPI_MESSAGE_TX };
	T_EQ(pbus_spi_message_new(spi, &mt, 1, &m), -EMSGSIZE);
	T_EXPECT(m == NULL);
	/* the kernel draws the line at the same place */
	struct spi_ioc_transfer k = { .tx_buf = (uintptr_t)buf, .rx_buf = (uintptr_t)buf, .len = 4097 };
	T_EXPECT(ioctl(pbus_spi_get_fd(spi), SPI_IOC_MESSAGE(1), &k) < 0 && errno == EMSGSIZE);
	free(buf);
	pbus_spi_close(spi);
	return NULL;
}

static const char *second_chip_select(void)
{
	struct pbus_spi *spi = NULL;
	T_EQ(pbus_spi_open("/dev/spidev0.1", &spi), 0);
	clear_log();
	uint8_t tx[2] = { 0xde, 0xad }, rx[2];
	T_EQ(pbus_spi_exchange(spi, tx, rx, 2), 2);
	T_EXPECT(memcmp(tx, rx, 2) == 0);
	const char *log = last_message();
	T_EXPECT(log && strstr(log, "msg seq=") && strstr(log, " cs=1 ") && strstr(log, "cs cs=1 level=0"));
	pbus_spi_close(spi);
	return NULL;
}

static const char *controller_fault_reported(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	uint8_t b[2] = { 0 };
	T_EQ(kenv_write_file(DBG "/fault", "5"), 0);
	int r = pbus_spi_exchange(spi, b, b, 2);
	kenv_write_file(DBG "/fault", "0");
	T_EQ(r, -EIO);
	T_EQ(pbus_spi_exchange(spi, b, b, 2), 2);
	pbus_spi_close(spi);
	return NULL;
}

static const char *device_removed_while_in_use(void)
{
	struct pbus_spi *spi = open0();
	T_EXPECT(spi);
	struct pbus_spi_message *m = NULL;
	struct pbus_spi_message_transfer t = { .length = 4, .flags = PBUS_SPI_MESSAGE_TX | PBUS_SPI_MESSAGE_RX };
	T_EQ(pbus_spi_message_new(spi, &t, 1, &m), 0);
	T_EQ(pbus_spi_message_run(m), 4);
	T_EQ(kenv_unbind(SPIDEV_DRV, "spi0.0"), 0);
	uint8_t b[4] = { 0 };
	int r1 = pbus_spi_exchange(spi, b, b, 4);
	int r2 = pbus_spi_message_run(m);
	uint32_t mode;
	int r3 = pbus_spi_get_mode(spi, &mode);
	pbus_spi_message_free(m);
	pbus_spi_close(spi);
	int rb = kenv_bind(SPIDEV_DRV, "spi0.0");
	T_EQ(r1, -ESHUTDOWN);
	T_EQ(r2, -ESHUTDOWN);
	T_EQ(r3, -ESHUTDOWN);
	T_EQ(rb, 0);
	/* back in service */
	for (int i = 0; i < 100 && !(spi = open0()); i++)
		suite_sleep_ms(10);
	T_EXPECT(spi);
	T_EQ(pbus_spi_exchange(spi, b, b, 4), 4);
	pbus_spi_close(spi);
	return NULL;
}

int main(void)
{
	suite_init();
	SUITE_RUN("spi/open-and-defaults", open_and_defaults);
	SUITE_RUN("spi/mode32-bits-speed", mode32_bits_speed);
	SUITE_RUN("spi/exchange-loopback", exchange_loopback);
	SUITE_RUN("spi/write-then-read-one-cs", write_then_read_one_chip_select);
	SUITE_RUN("spi/multi-buffer-per-transfer-settings", multi_buffer_per_transfer_settings);
	SUITE_RUN("spi/dual-quad-nbits", dual_quad_nbits);
	SUITE_RUN("spi/prepared-message-runs", prepared_message_runs);
	SUITE_RUN("spi/oversized-refused", oversized_refused);
	SUITE_RUN("spi/second-chip-select", second_chip_select);
	SUITE_RUN("spi/controller-fault-reported", controller_fault_reported);
	SUITE_RUN("spi/device-removed-while-in-use", device_removed_while_in_use);
	return suite_exit();
}
