/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/spi.h - SPI through spidev (/dev/spidevB.C).
 *
 * Objects:
 *  - struct pbus_spi: an open spidev node with its device-wide settings
 *    (mode, bits per word, maximum speed).
 *  - struct pbus_spi_message: a *prepared* message: its transfers, their
 *    buffers and the kernel's spi_ioc_transfer array are built once by
 *    pbus_spi_message_new(); pbus_spi_message_run() then issues one
 *    SPI_IOC_MESSAGE(N) ioctl and nothing else -- no allocation, no copy, no
 *    setup per call.  The caller fills the transmit buffers in place and
 *    reads the receive buffers in place.
 *
 * Chip select.  One message is one chip-select assertion: CS goes active
 * before the first transfer and inactive after the last, and stays active
 * between transfers unless a transfer sets cs_change (then CS is released
 * briefly after that transfer; on the last transfer cs_change asks the
 * controller to *keep* CS active after the message, a hint some controllers
 * ignore).
 *
 * The bufsiz limit.  spidev copies every message through a bounce buffer of
 * `bufsiz` bytes (module parameter, /sys/module/spidev/parameters/bufsiz,
 * default 4096): the transmit lengths of one message must add up to at most
 * bufsiz, and so must the receive lengths.  libparambus-hw REFUSES longer
 * messages with -EMSGSIZE before any ioctl; it never splits them, because a
 * split message would release chip select between the parts, which most
 * devices take as the end of a command.  Raise the limit with
 * spidev.bufsiz=N on the kernel command line (or modprobe parameter) when
 * longer transfers are needed.
 *
 * Threads: one thread per object.  A prepared message borrows its
 * pbus_spi: free every message before closing the device.
 */
#ifndef PARAMBUS_HW_SPI_H
#define PARAMBUS_HW_SPI_H

#include <stddef.h>
#include <stdint.h>

#include <parambus/hw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_spi;
struct pbus_spi_message;

/** Mode bits: the kernel's 32-bit SPI mode field (linux/spi/spi.h). */
#define PBUS_SPI_CPHA 0x00000001u
#define PBUS_SPI_CPOL 0x00000002u
#define PBUS_SPI_MODE_0 0x00000000u
#define PBUS_SPI_MODE_1 0x00000001u
#define PBUS_SPI_MODE_2 0x00000002u
#define PBUS_SPI_MODE_3 0x00000003u
#define PBUS_SPI_CS_HIGH 0x00000004u
#define PBUS_SPI_LSB_FIRST 0x00000008u
#define PBUS_SPI_3WIRE 0x00000010u
#define PBUS_SPI_LOOP 0x00000020u
#define PBUS_SPI_NO_CS 0x00000040u
#define PBUS_SPI_READY 0x00000080u
#define PBUS_SPI_TX_DUAL 0x00000100u
#define PBUS_SPI_TX_QUAD 0x00000200u
#define PBUS_SPI_RX_DUAL 0x00000400u
#define PBUS_SPI_RX_QUAD 0x00000800u
#define PBUS_SPI_CS_WORD 0x00001000u
#define PBUS_SPI_TX_OCTAL 0x00002000u
#define PBUS_SPI_RX_OCTAL 0x00004000u
#define PBUS_SPI_3WIRE_HIZ 0x00008000u

/** Most transfers in one message (pbus_spi_transfer_message() keeps them on the stack). */
#define PBUS_SPI_TRANSFERS_MAX 64

/**
 * struct pbus_spi_transfer - one transfer of a message.  Zero-initialise;
 * 0 in a setting means "the device's setting".
 */
struct pbus_spi_transfer {
	const void *tx;            /**< bytes to send, or NULL (controller sends zeros) */
	void *rx;                  /**< room for bytes received, or NULL */
	uint32_t length;           /**< bytes, > 0 */
	uint32_t speed_hz;         /**< this transfer's clock; 0: the device's */
	uint16_t delay_usecs;      /**< delay after the transfer, before CS change or the next */
	uint8_t bits_per_word;     /**< 0: the device's */
	uint8_t cs_change;         /**< 1: release CS after this transfer (see top) */
	uint8_t word_delay_usecs;  /**< delay between words */
	uint8_t tx_nbits;          /**< 0/1 single, 2 dual, 4 quad, 8 octal */
	uint8_t rx_nbits;
};

/** Flags of struct pbus_spi_message_transfer. */
enum {
	PBUS_SPI_MESSAGE_TX = 1u << 0, /**< the transfer sends (owns a transmit buffer) */
	PBUS_SPI_MESSAGE_RX = 1u << 1, /**< the transfer receives (owns a receive buffer) */
};

/** struct pbus_spi_message_transfer - one transfer of a prepared message. */
struct pbus_spi_message_transfer {
	uint32_t length;           /**< bytes, > 0 */
	uint32_t flags;            /**< PBUS_SPI_MESSAGE_TX and/or PBUS_SPI_MESSAGE_RX */
	const void *tx_initial;    /**< initial transmit content (length bytes), or NULL for zeros */
	uint32_t speed_hz;         /**< as in struct pbus_spi_transfer */
	uint16_t delay_usecs;
	uint8_t bits_per_word;
	uint8_t cs_change;
	uint8_t word_delay_usecs;
	uint8_t tx_nbits;
	uint8_t rx_nbits;
};

/**
 * pbus_spi_open() - open a spidev node and read its settings and spidev's
 * bufsiz.
 * @path: e.g. "/dev/spidev0.0".
 *
 * Return: 0, -EINVAL (NULL argument), -ENOENT (no such node: no spidev
 * bound to that device), -EACCES, -ENOTTY (not a spidev node), -ENOMEM.
 */
PBUS_API int pbus_spi_open(const char *path, struct pbus_spi **ret_spi);

/** pbus_spi_open_device() - open "/dev/spidev<bus>.<chip_select>".  Return: as pbus_spi_open(). */
PBUS_API int pbus_spi_open_device(unsigned int bus, unsigned int chip_select, struct pbus_spi **ret_spi);

/** pbus_spi_close() - close the device; NULL is ignored.  Free its messages first. */
PBUS_API void pbus_spi_close(struct pbus_spi *spi);

/** pbus_spi_get_fd() - the descriptor, owned by @spi; -EINVAL if NULL. */
PBUS_API int pbus_spi_get_fd(const struct pbus_spi *spi);

/**
 * pbus_spi_get_bufsiz() - the per-message limit in bytes (see top).
 * Return: the limit, or -EINVAL if @spi is NULL.
 */
PBUS_API int pbus_spi_get_bufsiz(const struct pbus_spi *spi);

/**
 * pbus_spi_set_mode() - set the full 32-bit mode (SPI_IOC_WR_MODE32):
 * PBUS_SPI_MODE_0..3 or'ed with the other PBUS_SPI_* bits.
 * Return: 0, -EINVAL (NULL, or a bit the controller does not support: the
 * kernel refuses it and keeps the old mode), -ENODEV (device removed).
 */
PBUS_API int pbus_spi_set_mode(struct pbus_spi *spi, uint32_t mode);

/** pbus_spi_get_mode() - read the mode (SPI_IOC_RD_MODE32).  0, -EINVAL, -ENODEV. */
PBUS_API int pbus_spi_get_mode(struct pbus_spi *spi, uint32_t *ret_mode);

/** pbus_spi_set_bits_per_word() - 0 means 8.  0, -EINVAL (unsupported by the controller), -ENODEV. */
PBUS_API int pbus_spi_set_bits_per_word(struct pbus_spi *spi, uint8_t bits);

/** pbus_spi_get_bits_per_word() - 0 (means 8) or the bits.  0, -EINVAL, -ENODEV. */
PBUS_API int pbus_spi_get_bits_per_word(struct pbus_spi *spi, uint8_t *ret_bits);

/** pbus_spi_set_max_speed() - default clock in Hz for transfers without their own.  0, -EINVAL, -ENODEV. */
PBUS_API int pbus_spi_set_max_speed(struct pbus_spi *spi, uint32_t hz);

/** pbus_spi_get_max_speed() - read the default clock in Hz.  0, -EINVAL, -ENODEV. */
PBUS_API int pbus_spi_get_max_speed(struct pbus_spi *spi, uint32_t *ret_hz);

/**
 * pbus_spi_transfer_message() - run @num transfers as one message (one
 * SPI_IOC_MESSAGE(@num) ioctl, one chip-select assertion).
 *
 * Return: the total number of bytes transferred, or -EINVAL (NULL argument,
 * @num 0 or > PBUS_SPI_TRANSFERS_MAX, a zero length, a setting the
 * controller refuses), -EMSGSIZE (the message exceeds bufsiz, see top),
 * -ENODEV / -ESHUTDOWN (device or controller removed), -ETIMEDOUT, -EIO.
 */
PBUS_API int pbus_spi_transfer_message(struct pbus_spi *spi, const struct pbus_spi_transfer *transfers, size_t num);

/**
 * pbus_spi_exchange() - full duplex: send @length bytes of @tx while
 * receiving @length bytes into @rx (which may equal @tx).
 * Return: as pbus_spi_transfer_message().
 */
PBUS_API int pbus_spi_exchange(struct pbus_spi *spi, const void *tx, void *rx, size_t length);

/**
 * pbus_spi_write_read() - half duplex under one chip select: send
 * @write_length bytes, then receive @read_length bytes (e.g. a command and
 * its answer).  Two transfers, one message.
 * Return: as pbus_spi_transfer_message().
 */
PBUS_API int pbus_spi_write_read(struct pbus_spi *spi, const void *tx, size_t write_length, void *rx,
				 size_t read_length);

/** pbus_spi_write() - send only.  Return: as pbus_spi_transfer_message(). */
PBUS_API int pbus_spi_write(struct pbus_spi *spi, const void *tx, size_t length);

/** pbus_spi_read() - receive only (the controller sends zeros).  Return: as pbus_spi_transfer_message(). */
PBUS_API int pbus_spi_read(struct pbus_spi *spi, void *rx, size_t length);

/* ---- prepared messages ------------------------------------------------ */

/**
 * pbus_spi_message_new() - prepare a message of @num transfers on @spi:
 * allocate its buffers (one block, owned by the message), copy the initial
 * transmit data, build the kernel's transfer array and ioctl number.
 *
 * Return: 0, -EINVAL (NULL argument, @num 0 or > PBUS_SPI_TRANSFERS_MAX, a
 * zero length, a transfer with neither TX nor RX, unknown flags),
 * -EMSGSIZE (the message exceeds bufsiz; checked here so that runs cannot
 * fail for it), -ENOMEM.
 */
PBUS_API int pbus_spi_message_new(struct pbus_spi *spi, const struct pbus_spi_message_transfer *transfers,
				  size_t num, struct pbus_spi_message **ret_message);

/** pbus_spi_message_free() - free the message and its buffers; NULL is ignored. */
PBUS_API void pbus_spi_message_free(struct pbus_spi_message *message);

/**
 * pbus_spi_message_run() - run the prepared message: one SPI_IOC_MESSAGE
 * ioctl, nothing allocated, nothing rebuilt.
 * Return: the total number of bytes transferred, or -EINVAL (NULL), or the
 * errors of pbus_spi_transfer_message() other than -EMSGSIZE.
 */
PBUS_API int pbus_spi_message_run(struct pbus_spi_message *message);

/**
 * pbus_spi_message_tx() - the transmit buffer of transfer @index, to fill in
 * place before a run.  Owned by the message; valid until it is freed.
 * Return: the buffer, or NULL (NULL message, bad index, or no TX flag).
 */
PBUS_API void *pbus_spi_message_tx(struct pbus_spi_message *message, size_t index);

/**
 * pbus_spi_message_rx() - the receive buffer of transfer @index, holding
 * what the last run received.  Owned by the message; valid until it is freed.
 * Return: the buffer, or NULL (NULL message, bad index, or no RX flag).
 */
PBUS_API const void *pbus_spi_message_rx(const struct pbus_spi_message *message, size_t index);

/**
 * pbus_spi_message_get_length() - the length of transfer @index in bytes.
 * Return: the length, or -EINVAL.
 */
PBUS_API int pbus_spi_message_get_length(const struct pbus_spi_message *message, size_t index);

#ifdef __cplusplus
}
#endif

#endif /* PARAMBUS_HW_SPI_H */
