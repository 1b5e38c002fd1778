/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/i2c.h - I2C and SMBus through i2c-dev (/dev/i2c-N).
 *
 * One struct pbus_i2c is one open bus plus a current target address (set with
 * pbus_i2c_set_address()).  Three ways to talk to a device:
 *
 *  - pbus_i2c_transfer(): I2C_RDWR, several messages in one bus transaction
 *    (a START, repeated STARTs between messages, one STOP at the end).  The
 *    register helpers are built on it: pbus_i2c_write_register() sends ONE
 *    write message [reg, data...] -- never a write of the register followed by
 *    a separate write of the data, which many devices would not accept --
 *    and pbus_i2c_read_register() sends a write of the register and a read
 *    joined by a repeated START.
 *  - the SMBus functions: the I2C_SMBUS ioctl called directly, nothing in
 *    between.  Adapters that only speak SMBus (many PC controllers,
 *    i2c-stub) support these but not I2C_RDWR.
 *  - pbus_i2c_read() / pbus_i2c_write(): plain read(2)/write(2), one message
 *    each, to the current address.
 *
 * Every call reports the kernel's error; typical ones, for every transfer
 * function: -ENXIO or -EREMOTEIO (no device acknowledged the address; which
 * one depends on the adapter driver), -ETIMEDOUT (bus stuck), -EAGAIN
 * (arbitration lost), -EOPNOTSUPP (the adapter cannot do this kind of
 * transfer: check pbus_i2c_get_functionality()), -EBADMSG (PEC mismatch),
 * -EPROTO (bad SMBus block length), -ENODEV (adapter removed), -EDESTADDRREQ
 * (no address set yet).
 *
 * Hot paths allocate nothing: the SMBus functions, the register helpers and
 * the transfers build their kernel structures on the stack.
 * Threads: one thread per object (see common.h).
 */
#ifndef PARAMBUS_HW_I2C_H
#define PARAMBUS_HW_I2C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/hw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_i2c;

/** Flags of pbus_i2c_set_address(). */
enum {
	/** The address is a 10-bit address (I2C_TENBIT). */
	PBUS_I2C_ADDRESS_TEN_BIT = 1u << 0,
	/** Use the address even if a kernel driver owns it (I2C_SLAVE_FORCE). */
	PBUS_I2C_ADDRESS_FORCE = 1u << 1,
};

/** Message flags; the values are the kernel's I2C_M_* bits. */
enum {
	PBUS_I2C_MESSAGE_READ = 0x0001,        /**< read from the device (I2C_M_RD) */
	PBUS_I2C_MESSAGE_TEN_BIT = 0x0010,     /**< 10-bit address (I2C_M_TEN) */
	PBUS_I2C_MESSAGE_RECV_LEN = 0x0400,    /**< first byte read is the length (SMBus block) */
	PBUS_I2C_MESSAGE_NO_RD_ACK = 0x0800,   /**< needs I2C_FUNC_PROTOCOL_MANGLING */
	PBUS_I2C_MESSAGE_IGNORE_NAK = 0x1000,  /**< needs I2C_FUNC_PROTOCOL_MANGLING */
	PBUS_I2C_MESSAGE_REV_DIR_ADDR = 0x2000, /**< needs I2C_FUNC_PROTOCOL_MANGLING */
	PBUS_I2C_MESSAGE_NO_START = 0x4000,    /**< needs I2C_FUNC_NOSTART */
	PBUS_I2C_MESSAGE_STOP = 0x8000,        /**< needs I2C_FUNC_PROTOCOL_MANGLING */
};

/** Adapter functionality bits (I2C_FUNCS), the kernel's I2C_FUNC_* values. */
#define PBUS_I2C_FUNC_I2C 0x00000001UL
#define PBUS_I2C_FUNC_10BIT_ADDR 0x00000002UL
#define PBUS_I2C_FUNC_PROTOCOL_MANGLING 0x00000004UL
#define PBUS_I2C_FUNC_SMBUS_PEC 0x00000008UL
#define PBUS_I2C_FUNC_NOSTART 0x00000010UL
#define PBUS_I2C_FUNC_SMBUS_BLOCK_PROC_CALL 0x00008000UL
#define PBUS_I2C_FUNC_SMBUS_QUICK 0x00010000UL
#define PBUS_I2C_FUNC_SMBUS_READ_BYTE 0x00020000UL
#define PBUS_I2C_FUNC_SMBUS_WRITE_BYTE 0x00040000UL
#define PBUS_I2C_FUNC_SMBUS_READ_BYTE_DATA 0x00080000UL
#define PBUS_I2C_FUNC_SMBUS_WRITE_BYTE_DATA 0x00100000UL
#define PBUS_I2C_FUNC_SMBUS_READ_WORD_DATA 0x00200000UL
#define PBUS_I2C_FUNC_SMBUS_WRITE_WORD_DATA 0x00400000UL
#define PBUS_I2C_FUNC_SMBUS_PROC_CALL 0x00800000UL
#define PBUS_I2C_FUNC_SMBUS_READ_BLOCK_DATA 0x01000000UL
#define PBUS_I2C_FUNC_SMBUS_WRITE_BLOCK_DATA 0x02000000UL
#define PBUS_I2C_FUNC_SMBUS_READ_I2C_BLOCK 0x04000000UL
#define PBUS_I2C_FUNC_SMBUS_WRITE_I2C_BLOCK 0x08000000UL
#define PBUS_I2C_FUNC_SMBUS_HOST_NOTIFY 0x10000000UL

/** Longest SMBus block (I2C_SMBUS_BLOCK_MAX). */
#define PBUS_I2C_SMBUS_BLOCK_MAX 32
/** Most messages in one pbus_i2c_transfer() (I2C_RDWR_IOCTL_MAX_MSGS). */
#define PBUS_I2C_TRANSFER_MESSAGES_MAX 42
/** Longest message i2c-dev accepts (8192 bytes). */
#define PBUS_I2C_MESSAGE_LENGTH_MAX 8192
/** Longest data of pbus_i2c_write_register() (it builds the message on the stack). */
#define PBUS_I2C_REGISTER_WRITE_MAX 256

/**
 * struct pbus_i2c_message - one message of an I2C_RDWR transaction.
 *
 * Same layout as the kernel's struct i2c_msg, so an array of these is passed
 * to the kernel as it is.  The buffer stays the caller's.
 */
struct pbus_i2c_message {
	uint16_t address; /**< 7-bit (or 10-bit with PBUS_I2C_MESSAGE_TEN_BIT) */
	uint16_t flags;   /**< PBUS_I2C_MESSAGE_* */
	uint16_t length;  /**< bytes, <= PBUS_I2C_MESSAGE_LENGTH_MAX */
	uint8_t *buffer;  /**< data to write, or room for the data read */
};

/**
 * pbus_i2c_open() - open an i2c-dev node.
 * @path: e.g. "/dev/i2c-1".
 * @ret_i2c: the bus; close with pbus_i2c_close().
 *
 * Return: 0, -EINVAL (NULL argument), -ENOENT (no such node: is i2c-dev
 * loaded?), -EACCES, -ENOTTY (@path is not an i2c-dev node), -ENOMEM, or
 * another errno from open(2).
 */
PBUS_API int pbus_i2c_open(const char *path, struct pbus_i2c **ret_i2c);

/** pbus_i2c_open_bus() - open "/dev/i2c-<bus>".  Return: as pbus_i2c_open(). */
PBUS_API int pbus_i2c_open_bus(unsigned int bus, struct pbus_i2c **ret_i2c);

/** pbus_i2c_close() - close the bus; NULL is ignored. */
PBUS_API void pbus_i2c_close(struct pbus_i2c *i2c);

/** pbus_i2c_get_fd() - the descriptor, owned by @i2c; -EINVAL if NULL. */
PBUS_API int pbus_i2c_get_fd(const struct pbus_i2c *i2c);

/**
 * pbus_i2c_get_functionality() - the adapter's I2C_FUNCS mask, read into a
 * full unsigned long (the kernel writes that many bytes).
 * Return: 0, -EINVAL, -ENODEV (adapter removed).
 */
PBUS_API int pbus_i2c_get_functionality(struct pbus_i2c *i2c, unsigned long *ret_functionality);

/**
 * pbus_i2c_set_address() - choose the target of the SMBus functions, the
 * register helpers and plain read/write (I2C_TENBIT, then I2C_SLAVE or
 * I2C_SLAVE_FORCE).
 * @address: 0x00..0x7f, or 0x000..0x3ff with PBUS_I2C_ADDRESS_TEN_BIT.
 * @flags: PBUS_I2C_ADDRESS_*.
 *
 * Nothing goes on the bus; a missing device shows up at the first transfer.
 * Return: 0, -EINVAL (address out of range, unknown flag), -EBUSY (a kernel
 * driver owns the address: use PBUS_I2C_ADDRESS_FORCE if you must),
 * -EOPNOTSUPP (10-bit requested and the adapter lacks I2C_FUNC_10BIT_ADDR).
 * On failure the previous address stays in effect.
 */
PBUS_API int pbus_i2c_set_address(struct pbus_i2c *i2c, uint16_t address, unsigned int flags);

/** pbus_i2c_get_address() - the current address, or -EDESTADDRREQ if none was set, -EINVAL. */
PBUS_API int pbus_i2c_get_address(const struct pbus_i2c *i2c);

/**
 * pbus_i2c_set_pec() - enable or disable SMBus packet error checking
 * (I2C_PEC) for the SMBus functions.
 * Return: 0, -EINVAL, -EOPNOTSUPP (enabling on an adapter without
 * I2C_FUNC_SMBUS_PEC).
 */
PBUS_API int pbus_i2c_set_pec(struct pbus_i2c *i2c, bool enable);

/**
 * pbus_i2c_set_timeout() - adapter timeout in milliseconds (I2C_TIMEOUT,
 * kept by the kernel in units of 10 ms, rounded up).
 * Return: 0, -EINVAL.
 */
PBUS_API int pbus_i2c_set_timeout(struct pbus_i2c *i2c, unsigned int timeout_ms);

/** pbus_i2c_set_retries() - how often the adapter retries on arbitration loss (I2C_RETRIES).  0 or -EINVAL. */
PBUS_API int pbus_i2c_set_retries(struct pbus_i2c *i2c, unsigned int retries);

/**
 * pbus_i2c_transfer() - run @num messages as one transaction (I2C_RDWR).
 * Each message names its own address; the read buffers are filled in place.
 * Return: 0, -EINVAL (NULL argument, @num 0 or > 42, a message longer than
 * 8192 or without buffer), -EOPNOTSUPP (the adapter has no plain-I2C
 * transfers, e.g. i2c-stub), or the errors listed at the top.
 */
PBUS_API int pbus_i2c_transfer(struct pbus_i2c *i2c, struct pbus_i2c_message *messages, size_t num);

/**
 * pbus_i2c_write_register() - write @length bytes to register @reg of the
 * current address as ONE message: START addr+W reg data... STOP.
 * Return: 0, -EINVAL, -EMSGSIZE (@length > PBUS_I2C_REGISTER_WRITE_MAX), or
 * as pbus_i2c_transfer().
 */
PBUS_API int pbus_i2c_write_register(struct pbus_i2c *i2c, uint8_t reg, const void *data, size_t length);

/**
 * pbus_i2c_read_register() - read @length bytes from register @reg: write
 * [reg], repeated START, read @length bytes, STOP -- one I2C_RDWR.
 * Return: 0, -EINVAL, or as pbus_i2c_transfer().
 */
PBUS_API int pbus_i2c_read_register(struct pbus_i2c *i2c, uint8_t reg, void *data, size_t length);

/**
 * pbus_i2c_write_read() - write @write_length bytes then read @read_length
 * bytes with a repeated START in between (for 16-bit register addresses,
 * command protocols, ...).  Either length may be 0 to do only the other.
 * Return: 0, -EINVAL, or as pbus_i2c_transfer().
 */
PBUS_API int pbus_i2c_write_read(struct pbus_i2c *i2c, const void *write_data, size_t write_length,
				 void *read_data, size_t read_length);

/**
 * pbus_i2c_read() - plain read(2): one read message of @length bytes from
 * the current address.
 * Return: the number of bytes read, or -EINVAL, -EDESTADDRREQ, or as above.
 */
PBUS_API int pbus_i2c_read(struct pbus_i2c *i2c, void *data, size_t length);

/**
 * pbus_i2c_write() - plain write(2): one write message of @length bytes to
 * the current address.
 * Return: the number of bytes written, or -EINVAL, -EDESTADDRREQ, or as
 * above.
 */
PBUS_API int pbus_i2c_write(struct pbus_i2c *i2c, const void *data, size_t length);

/*
 * SMBus, through the I2C_SMBUS ioctl, to the current address.  Read
 * functions return the value read (>= 0) or -errno; write functions return
 * 0 or -errno.  Errors: those listed at the top, plus -EINVAL for a NULL
 * argument or a length out of range.  With PEC enabled a checksum mismatch
 * gives -EBADMSG.
 */

/** SMBus quick command: the R/W bit is @read (0 or 1), no data. */
PBUS_API int pbus_i2c_smbus_quick(struct pbus_i2c *i2c, int read);
/** SMBus receive byte: 0..255. */
PBUS_API int pbus_i2c_smbus_read_byte(struct pbus_i2c *i2c);
/** SMBus send byte. */
PBUS_API int pbus_i2c_smbus_write_byte(struct pbus_i2c *i2c, uint8_t value);
/** SMBus read byte data: register @command, 0..255. */
PBUS_API int pbus_i2c_smbus_read_byte_data(struct pbus_i2c *i2c, uint8_t command);
/** SMBus write byte data. */
PBUS_API int pbus_i2c_smbus_write_byte_data(struct pbus_i2c *i2c, uint8_t command, uint8_t value);
/** SMBus read word data: 0..65535, low byte first on the wire (SMBus order). */
PBUS_API int pbus_i2c_smbus_read_word_data(struct pbus_i2c *i2c, uint8_t command);
/** SMBus write word data, low byte first on the wire. */
PBUS_API int pbus_i2c_smbus_write_word_data(struct pbus_i2c *i2c, uint8_t command, uint16_t value);
/** SMBus process call: write a word, read a word back; returns 0..65535. */
PBUS_API int pbus_i2c_smbus_process_call(struct pbus_i2c *i2c, uint8_t command, uint16_t value);
/**
 * SMBus block read: the device sends a count then that many bytes (1..32).
 * @data must hold PBUS_I2C_SMBUS_BLOCK_MAX bytes.  Returns the count.
 */
PBUS_API int pbus_i2c_smbus_read_block_data(struct pbus_i2c *i2c, uint8_t command, uint8_t *data);
/** SMBus block write of 1..32 bytes (a count byte precedes them on the wire). */
PBUS_API int pbus_i2c_smbus_write_block_data(struct pbus_i2c *i2c, uint8_t command, const uint8_t *data,
					     size_t length);
/**
 * SMBus block process call: write 1..32 bytes, read a block back into @data
 * (room for PBUS_I2C_SMBUS_BLOCK_MAX bytes).  Returns the count read.
 */
PBUS_API int pbus_i2c_smbus_block_process_call(struct pbus_i2c *i2c, uint8_t command,
					       const uint8_t *write_data, size_t write_length,
					       uint8_t *data);
/** I2C block read (no count byte): read @length (1..32) bytes from @command.  Returns the bytes read. */
PBUS_API int pbus_i2c_smbus_read_i2c_block_data(struct pbus_i2c *i2c, uint8_t command, uint8_t *data,
						size_t length);
/** I2C block write (no count byte) of 1..32 bytes starting at @command. */
PBUS_API int pbus_i2c_smbus_write_i2c_block_data(struct pbus_i2c *i2c, uint8_t command,
						 const uint8_t *data, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* PARAMBUS_HW_I2C_H */
