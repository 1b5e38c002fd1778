/* SPDX-License-Identifier: MIT */
/*
 * i2c.c - I2C and SMBus through i2c-dev.
 *
 * Every transfer is one ioctl (I2C_RDWR or I2C_SMBUS) or one read/write on
 * the node, with its kernel structures on the stack: no allocation, no
 * helper library.  The register helpers keep a register write in ONE
 * message; on SMBus-only adapters (no I2C_FUNC_I2C) they use the SMBus
 * transfer that puts exactly the same bytes on the wire, so they work on
 * both kinds of adapter.
 *
 * We refuse to transfer before an address was set: i2c-dev's default
 * address is 0x00, the general-call address, which every device on the bus
 * listens to -- a stray write there is never what the caller meant.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "hw-internal.h"
#include "parambus/hw/i2c.h"

_Static_assert(sizeof(struct pbus_i2c_message) == sizeof(struct i2c_msg), "i2c_msg layout");
_Static_assert(offsetof(struct pbus_i2c_message, address) == offsetof(struct i2c_msg, addr) &&
		       offsetof(struct pbus_i2c_message, flags) == offsetof(struct i2c_msg, flags) &&
		       offsetof(struct pbus_i2c_message, length) == offsetof(struct i2c_msg, len) &&
		       offsetof(struct pbus_i2c_message, buffer) == offsetof(struct i2c_msg, buf),
	       "i2c_msg field offsets");
_Static_assert(PBUS_I2C_MESSAGE_READ == I2C_M_RD && PBUS_I2C_MESSAGE_TEN_BIT == I2C_M_TEN &&
		       PBUS_I2C_MESSAGE_NO_START == I2C_M_NOSTART && PBUS_I2C_MESSAGE_STOP == I2C_M_STOP &&
		       PBUS_I2C_MESSAGE_RECV_LEN == I2C_M_RECV_LEN,
	       "message flags are the kernel's");
_Static_assert(PBUS_I2C_FUNC_SMBUS_PEC == I2C_FUNC_SMBUS_PEC &&
		       PBUS_I2C_FUNC_SMBUS_WRITE_I2C_BLOCK == I2C_FUNC_SMBUS_WRITE_I2C_BLOCK,
	       "functionality bits are the kernel's");
_Static_assert(PBUS_I2C_SMBUS_BLOCK_MAX == I2C_SMBUS_BLOCK_MAX, "block size");
_Static_assert(PBUS_I2C_TRANSFER_MESSAGES_MAX == I2C_RDWR_IOCTL_MAX_MSGS, "message count");

struct pbus_i2c {
	int fd;
	int address;        /* -1 until set */
	bool ten_bit;       /* of the current address */
	unsigned long funcs;
};

#define ARG(v) ((void *)(unsigned long)(v))

int pbus_i2c_open(const char *path, struct pbus_i2c **ret_i2c)
{
	unsigned long funcs = 0;

	if (!path || !*path || !ret_i2c)
		return -EINVAL;
	/* I2C_FUNCS writes a whole unsigned long: never pass a narrower one. */
	int fd = pbus_hw_open_device(path, I2C_FUNCS, &funcs);
	if (fd < 0)
		return fd;
	struct pbus_i2c *i2c = calloc(1, sizeof(*i2c));
	if (!i2c) {
		close(fd);
		return -ENOMEM;
	}
	i2c->fd = fd;
	i2c->address = -1;
	i2c->funcs = funcs;
	*ret_i2c = i2c;
	return 0;
}

int pbus_i2c_open_bus(unsigned int bus, struct pbus_i2c **ret_i2c)
{
	char path[32];
	snprintf(path, sizeof(path), "/dev/i2c-%u", bus);
	return pbus_i2c_open(path, ret_i2c);
}

void pbus_i2c_close(struct pbus_i2c *i2c)
{
	if (!i2c)
		return;
	close(i2c->fd);
	free(i2c);
}

int pbus_i2c_get_fd(const struct pbus_i2c *i2c)
{
	return i2c ? i2c->fd : -EINVAL;
}

int pbus_i2c_get_functionality(struct pbus_i2c *i2c, unsigned long *ret_functionality)
{
	unsigned long funcs = 0;

	if (!i2c || !ret_functionality)
		return -EINVAL;
	int r = pbus_hw_ioctl(i2c->fd, I2C_FUNCS, &funcs);
	if (r < 0)
		return r;
	i2c->funcs = funcs;
	*ret_functionality = funcs;
	return 0;
}

int pbus_i2c_set_address(struct pbus_i2c *i2c, uint16_t address, unsigned int flags)
{
	if (!i2c || (flags & ~(unsigned)(PBUS_I2C_ADDRESS_TEN_BIT | PBUS_I2C_ADDRESS_FORCE)))
		return -EINVAL;
	const bool ten = flags & PBUS_I2C_ADDRESS_TEN_BIT;
	if (address > (ten ? 0x3ff : 0x7f))
		return -EINVAL;
	if (ten && !(i2c->funcs & I2C_FUNC_10BIT_ADDR))
		return -EOPNOTSUPP;

	int r;
	if (ten != i2c->ten_bit) {
		r = pbus_hw_ioctl(i2c->fd, I2C_TENBIT, ARG(ten ? 1 : 0));
		if (r < 0)
			return r;
	}
	r = pbus_hw_ioctl(i2c->fd, (flags & PBUS_I2C_ADDRESS_FORCE) ? I2C_SLAVE_FORCE : I2C_SLAVE,
			  ARG(address));
	if (r < 0) {
		/* Leave the previous address in effect, as documented. */
		if (ten != i2c->ten_bit)
			(void)pbus_hw_ioctl(i2c->fd, I2C_TENBIT, ARG(i2c->ten_bit ? 1 : 0));
		return r;
	}
	i2c->ten_bit = ten;
	i2c->address = address;
	return 0;
}

int pbus_i2c_get_address(const struct pbus_i2c *i2c)
{
	if (!i2c)
		return -EINVAL;
	return i2c->address < 0 ? -EDESTADDRREQ : i2c->address;
}

int pbus_i2c_set_pec(struct pbus_i2c *i2c, bool enable)
{
	if (!i2c)
		return -EINVAL;
	if (enable && !(i2c->funcs & I2C_FUNC_SMBUS_PEC))
		return -EOPNOTSUPP;
	int r = pbus_hw_ioctl(i2c->fd, I2C_PEC, ARG(enable ? 1 : 0));
	return r < 0 ? r : 0;
}

int pbus_i2c_set_timeout(struct pbus_i2c *i2c, unsigned int timeout_ms)
{
	if (!i2c || timeout_ms > INT_MAX - 9)
		return -EINVAL;
	int r = pbus_hw_ioctl(i2c->fd, I2C_TIMEOUT, ARG((timeout_ms + 9) / 10));
	return r < 0 ? r : 0;
}

int pbus_i2c_set_retries(struct pbus_i2c *i2c, unsigned int retries)
{
	if (!i2c || retries > INT_MAX)
		return -EINVAL;
	int r = pbus_hw_ioctl(i2c->fd, I2C_RETRIES, ARG(retries));
	return r < 0 ? r : 0;
}

/* ---- I2C_RDWR ----------------------------------------------------------- */

int pbus_i2c_transfer(struct pbus_i2c *i2c, struct pbus_i2c_message *messages, size_t num)
{
	if (!i2c || !messages || num == 0 || num > I2C_RDWR_IOCTL_MAX_MSGS)
		return -EINVAL;
	for (size_t i = 0; i < num; i++)
		if (messages[i].length > PBUS_I2C_MESSAGE_LENGTH_MAX ||
		    (messages[i].length && !messages[i].buffer))
			return -EINVAL;
	struct i2c_rdwr_ioctl_data data = {
		.msgs = (struct i2c_msg *)(void *)messages,
		.nmsgs = (__u32)num,
	};
	int r = pbus_hw_ioctl(i2c->fd, I2C_RDWR, &data);
	if (r < 0)
		return r;
	/* The kernel returns the number of messages done; fewer is a failure
	 * the caller must hear about. */
	return (size_t)r == num ? 0 : -EIO;
}

static inline uint16_t message_flags(const struct pbus_i2c *i2c, uint16_t flags)
{
	return (uint16_t)(flags | (i2c->ten_bit ? I2C_M_TEN : 0));
}

/* SMBus transfer to the current address; the whole SMBus layer is this. */
static inline int smbus(struct pbus_i2c *i2c, uint8_t read_write, uint8_t command, uint32_t size,
			union i2c_smbus_data *data)
{
	if (i2c->address < 0)
		return -EDESTADDRREQ;
	struct i2c_smbus_ioctl_data args = {
		.read_write = read_write,
		.command = command,
		.size = size,
		.data = data,
	};
	int r = pbus_hw_ioctl(i2c->fd, I2C_SMBUS, &args);
	return r < 0 ? r : 0;
}

int pbus_i2c_write_register(struct pbus_i2c *i2c, uint8_t reg, const void *data, size_t length)
{
	uint8_t buf[1 + PBUS_I2C_REGISTER_WRITE_MAX];

	if (!i2c || (length && !data))
		return -EINVAL;
	if (length > PBUS_I2C_REGISTER_WRITE_MAX)
		return -EMSGSIZE;
	if (i2c->address < 0)
		return -EDESTADDRREQ;

	if (!(i2c->funcs & I2C_FUNC_I2C)) {
		/* SMBus-only adapter: these transfers are the same single
		 * write message on the wire. */
		union i2c_smbus_data d;
		if (length == 0)
			return smbus(i2c, I2C_SMBUS_WRITE, reg, I2C_SMBUS_BYTE, NULL);
		if (length == 1 && (i2c->funcs & I2C_FUNC_SMBUS_WRITE_BYTE_DATA)) {
			d.byte = *(const uint8_t *)data;
			return smbus(i2c, I2C_SMBUS_WRITE, reg, I2C_SMBUS_BYTE_DATA, &d);
		}
		if (length <= I2C_SMBUS_BLOCK_MAX && (i2c->funcs & I2C_FUNC_SMBUS_WRITE_I2C_BLOCK)) {
			d.block[0] = (uint8_t)length;
			memcpy(&d.block[1], data, length);
			return smbus(i2c, I2C_SMBUS_WRITE, reg, I2C_SMBUS_I2C_BLOCK_DATA, &d);
		}
		return -EOPNOTSUPP;
	}

	buf[0] = reg;
	if (length)
		memcpy(buf + 1, data, length);
	struct pbus_i2c_message msg = {
		.address = (uint16_t)i2c->address,
		.flags = message_flags(i2c, 0),
		.length = (uint16_t)(length + 1),
		.buffer = buf,
	};
	return pbus_i2c_transfer(i2c, &msg, 1);
}

int pbus_i2c_read_register(struct pbus_i2c *i2c, uint8_t reg, void *data, size_t length)
{
	if (!i2c || !data || length == 0 || length > PBUS_I2C_MESSAGE_LENGTH_MAX)
		return -EINVAL;
	if (i2c->address < 0)
		return -EDESTADDRREQ;

	if (!(i2c->funcs & I2C_FUNC_I2C)) {
		union i2c_smbus_data d;
		int r;
		if (length == 1 && (i2c->funcs & I2C_FUNC_SMBUS_READ_BYTE_DATA)) {
			r = smbus(i2c, I2C_SMBUS_READ, reg, I2C_SMBUS_BYTE_DATA, &d);
			if (r == 0)
				*(uint8_t *)data = d.byte;
			return r;
		}
		if (length <= I2C_SMBUS_BLOCK_MAX && (i2c->funcs & I2C_FUNC_SMBUS_READ_I2C_BLOCK)) {
			d.block[0] = (uint8_t)length;
			r = smbus(i2c, I2C_SMBUS_READ, reg, I2C_SMBUS_I2C_BLOCK_DATA, &d);
			if (r < 0)
				return r;
			if (d.block[0] != length)
				return -EIO;
			memcpy(data, &d.block[1], length);
			return 0;
		}
		return -EOPNOTSUPP;
	}
	return pbus_i2c_write_read(i2c, &reg, 1, data, length);
}

int pbus_i2c_write_read(struct pbus_i2c *i2c, const void *write_data, size_t write_length, void *read_data,
			size_t read_length)
{
	struct pbus_i2c_message msgs[2];
	size_t n = 0;

	if (!i2c || (write_length && !write_data) || (read_length && !read_data))
		return -EINVAL;
	if (write_length + read_length == 0 || write_length > PBUS_I2C_MESSAGE_LENGTH_MAX ||
	    read_length > PBUS_I2C_MESSAGE_LENGTH_MAX)
		return -EINVAL;
	if (i2c->address < 0)
		return -EDESTADDRREQ;
	if (write_length)
		msgs[n++] = (struct pbus_i2c_message){
			.address = (uint16_t)i2c->address,
			.flags = message_flags(i2c, 0),
			.length = (uint16_t)write_length,
			/* the kernel only reads a write buffer */
			.buffer = (uint8_t *)(uintptr_t)write_data,
		};
	if (read_length)
		msgs[n++] = (struct pbus_i2c_message){
			.address = (uint16_t)i2c->address,
			.flags = message_flags(i2c, I2C_M_RD),
			.length = (uint16_t)read_length,
			.buffer = read_data,
		};
	return pbus_i2c_transfer(i2c, msgs, n);
}

int pbus_i2c_read(struct pbus_i2c *i2c, void *data, size_t length)
{
	if (!i2c || !data || length == 0 || length > PBUS_I2C_MESSAGE_LENGTH_MAX)
		return -EINVAL;
	if (i2c->address < 0)
		return -EDESTADDRREQ;
	ssize_t n = read(i2c->fd, data, length);
	return n < 0 ? -errno : (int)n;
}

int pbus_i2c_write(struct pbus_i2c *i2c, const void *data, size_t length)
{
	if (!i2c || !data || length == 0 || length > PBUS_I2C_MESSAGE_LENGTH_MAX)
		return -EINVAL;
	if (i2c->address < 0)
		return -EDESTADDRREQ;
	ssize_t n = write(i2c->fd, data, length);
	return n < 0 ? -errno : (int)n;
}

/* ---- SMBus -------------------------------------------------------------- */

int pbus_i2c_smbus_quick(struct pbus_i2c *i2c, int read)
{
	if (!i2c)
		return -EINVAL;
	return smbus(i2c, read ? I2C_SMBUS_READ : I2C_SMBUS_WRITE, 0, I2C_SMBUS_QUICK, NULL);
}

int pbus_i2c_smbus_read_byte(struct pbus_i2c *i2c)
{
	union i2c_smbus_data d;
	if (!i2c)
		return -EINVAL;
	int r = smbus(i2c, I2C_SMBUS_READ, 0, I2C_SMBUS_BYTE, &d);
	return r < 0 ? r : d.byte;
}

int pbus_i2c_smbus_write_byte(struct pbus_i2c *i2c, uint8_t value)
{
	if (!i2c)
		return -EINVAL;
	return smbus(i2c, I2C_SMBUS_WRITE, value, I2C_SMBUS_BYTE, NULL);
}

int pbus_i2c_smbus_read_byte_data(struct pbus_i2c *i2c, uint8_t command)
{
	union i2c_smbus_data d;
	if (!i2c)
		return -EINVAL;
	int r = smbus(i2c, I2C_SMBUS_READ, command, I2C_SMBUS_BYTE_DATA, &d);
	return r < 0 ? r : d.byte;
}

int pbus_i2c_smbus_write_byte_data(struct pbus_i2c *i2c, uint8_t command, uint8_t value)
{
	union i2c_smbus_data d;
	if (!i2c)
		return -EINVAL;
	d.byte = value;
	return smbus(i2c, I2C_SMBUS_WRITE, command, I2C_SMBUS_BYTE_DATA, &d);
}

int pbus_i2c_smbus_read_word_data(struct pbus_i2c *i2c, uint8_t command)
{
	union i2c_smbus_data d;
	if (!i2c)
		return -EINVAL;
	int r = smbus(i2c, I2C_SMBUS_READ, command, I2C_SMBUS_WORD_DATA, &d);
	return r < 0 ? r : d.word;
}

int pbus_i2c_smbus_write_word_data(struct pbus_i2c *i2c, uint8_t command, uint16_t value)
{
	union i2c_smbus_data d;
	if (!i2c)
		return -EINVAL;
	d.word = value;
	return smbus(i2c, I2C_SMBUS_WRITE, command, I2C_SMBUS_WORD_DATA, &d);
}

int pbus_i2c_smbus_process_call(struct pbus_i2c *i2c, uint8_t command, uint16_t value)
{
	union i2c_smbus_data d;
	if (!i2c)
		return -EINVAL;
	d.word = value;
	int r = smbus(i2c, I2C_SMBUS_WRITE, command, I2C_SMBUS_PROC_CALL, &d);
	return r < 0 ? r : d.word;
}

int pbus_i2c_smbus_read_block_data(struct pbus_i2c *i2c, uint8_t command, uint8_t *data)
{
	union i2c_smbus_data d;
	if (!i2c || !data)
		return -EINVAL;
	int r = smbus(i2c, I2C_SMBUS_READ, command, I2C_SMBUS_BLOCK_DATA, &d);
	if (r < 0)
		return r;
	if (d.block[0] == 0 || d.block[0] > I2C_SMBUS_BLOCK_MAX)
		return -EPROTO;
	memcpy(data, &d.block[1], d.block[0]);
	return d.block[0];
}

int pbus_i2c_smbus_write_block_data(struct pbus_i2c *i2c, uint8_t command, const uint8_t *data, size_t length)
{
	union i2c_smbus_data d;
	if (!i2c || !data || length == 0 || length > I2C_SMBUS_BLOCK_MAX)
		return -EINVAL;
	d.block[0] = (uint8_t)length;
	memcpy(&d.block[1], data, length);
	return smbus(i2c, I2C_SMBUS_WRITE, command, I2C_SMBUS_BLOCK_DATA, &d);
}

int pbus_i2c_smbus_block_process_call(struct pbus_i2c *i2c, uint8_t command, const uint8_t *write_data,
				      size_t write_length, uint8_t *data)
{
	union i2c_smbus_data d;
	if (!i2c || !write_data || !data || write_length == 0 || write_length > I2C_SMBUS_BLOCK_MAX)
		return -EINVAL;
	d.block[0] = (uint8_t)write_length;
	memcpy(&d.block[1], write_data, write_length);
	int r = smbus(i2c, I2C_SMBUS_WRITE, command, I2C_SMBUS_BLOCK_PROC_CALL, &d);
	if (r < 0)
		return r;
	if (d.block[0] == 0 || d.block[0] > I2C_SMBUS_BLOCK_MAX)
		return -EPROTO;
	memcpy(data, &d.block[1], d.block[0]);
	return d.block[0];
}

int pbus_i2c_smbus_read_i2c_block_data(struct pbus_i2c *i2c, uint8_t command, uint8_t *data, size_t length)
{
	union i2c_smbus_data d;
	if (!i2c || !data || length == 0 || length > I2C_SMBUS_BLOCK_MAX)
		return -EINVAL;
	d.block[0] = (uint8_t)length;
	int r = smbus(i2c, I2C_SMBUS_READ, command, I2C_SMBUS_I2C_BLOCK_DATA, &d);
	if (r < 0)
		return r;
	if (d.block[0] > length)
		return -EPROTO;
	memcpy(data, &d.block[1], d.block[0]);
	return d.block[0];
}

int pbus_i2c_smbus_write_i2c_block_data(struct pbus_i2c *i2c, uint8_t command, const uint8_t *data,
					size_t length)
{
	union i2c_smbus_data d;
	if (!i2c || !data || length == 0 || length > I2C_SMBUS_BLOCK_MAX)
		return -EINVAL;
	d.block[0] = (uint8_t)length;
	memcpy(&d.block[1], data, length);
	return smbus(i2c, I2C_SMBUS_WRITE, command, I2C_SMBUS_I2C_BLOCK_DATA, &d);
}
