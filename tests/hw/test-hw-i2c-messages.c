/* SPDX-License-Identifier: MIT */
/*
 * test-hw-i2c-messages.c - what the I2C layer hands the kernel, without a
 * device.
 *
 * /dev/null stands in for an i2c-dev node and the ioctl test hook answers
 * I2C_FUNCS and records I2C_RDWR / I2C_SMBUS / I2C_SLAVE calls (the host has
 * no I2C adapter; the VM suite checks the same on the wire with the mock
 * adapter's transfer log).  Checked: a register write is ONE message, a
 * register read is write + read with a repeated start, SMBus arguments are
 * passed as the kernel defines them, address rules, PEC gating, and every
 * injected error comes back unchanged.
 */
#include <errno.h>
#include <stdint.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "alloc-count.h"
#include "hw-internal.h"
#include "pbus-check.h"
#include "parambus/hw/i2c.h"

static struct {
	unsigned long funcs;
	int calls;
	unsigned long request;
	unsigned long arg_value;
	struct i2c_msg msgs[4];
	uint8_t data[4][300];
	uint32_t nmsgs;
	struct i2c_smbus_ioctl_data smbus;
	union i2c_smbus_data smbus_data;
	int fail_with;
	int block_count; /* count the fake device returns for block reads */
} fake;

static int fake_adapter(int fd, unsigned long request, void *arg, void *userdata, bool *handled)
{
	(void)fd;
	(void)userdata;
	*handled = true;
	if (request == I2C_FUNCS) {
		*(unsigned long *)arg = fake.funcs;
		return 0;
	}
	fake.calls++;
	fake.request = request;
	fake.arg_value = (unsigned long)arg;
	if (fake.fail_with) {
		int r = fake.fail_with;
		fake.fail_with = 0;
		return r;
	}
	if (request == I2C_RDWR) {
		struct i2c_rdwr_ioctl_data *d = arg;
		fake.nmsgs = d->nmsgs;
		for (uint32_t i = 0; i < d->nmsgs && i < 4; i++) {
			fake.msgs[i] = d->msgs[i];
			if (d->msgs[i].flags & I2C_M_RD)
				for (int k = 0; k < d->msgs[i].len; k++)
					d->msgs[i].buf[k] = (uint8_t)(0xa0 + k);
			else
				memcpy(fake.data[i], d->msgs[i].buf, d->msgs[i].len);
		}
		return (int)d->nmsgs;
	}
	if (request == I2C_SMBUS) {
		struct i2c_smbus_ioctl_data *d = arg;
		fake.smbus = *d;
		if (d->data)
			fake.smbus_data = *d->data;
		if (d->read_write == I2C_SMBUS_READ || d->size == I2C_SMBUS_PROC_CALL) {
			switch (d->size) {
			case I2C_SMBUS_BYTE:
			case I2C_SMBUS_BYTE_DATA: d->data->byte = 0x5a; break;
			case I2C_SMBUS_WORD_DATA:
			case I2C_SMBUS_PROC_CALL: d->data->word = 0xbeef; break;
			case I2C_SMBUS_BLOCK_DATA:
				d->data->block[0] = (uint8_t)fake.block_count;
				for (int k = 1; k <= 32; k++)
					d->data->block[k] = (uint8_t)k;
				break;
			case I2C_SMBUS_I2C_BLOCK_DATA:
				for (int k = 1; k <= d->data->block[0]; k++)
					d->data->block[k] = (uint8_t)(0x10 + k);
				break;
			}
		}
		return 0;
	}
	if (request == I2C_SLAVE || request == I2C_SLAVE_FORCE || request == I2C_TENBIT || request == I2C_PEC ||
	    request == I2C_TIMEOUT || request == I2C_RETRIES)
		return 0;
	*handled = false;
	return 0;
}

static struct pbus_i2c *open_fake(unsigned long funcs)
{
	struct pbus_i2c *i2c = NULL;
	memset(&fake, 0, sizeof(fake));
	fake.funcs = funcs;
	fake.block_count = 4;
	pbus_hw_set_ioctl_hook(fake_adapter, NULL);
	if (pbus_i2c_open("/dev/null", &i2c) < 0)
		return NULL;
	return i2c;
}

static void close_fake(struct pbus_i2c *i2c)
{
	pbus_i2c_close(i2c);
	pbus_hw_set_ioctl_hook(NULL, NULL);
}

#define FULL_FUNCS (I2C_FUNC_I2C | I2C_FUNC_10BIT_ADDR | I2C_FUNC_SMBUS_EMUL_ALL)
#define STUB_FUNCS 0x0c7f0000UL /* i2c-stub: SMBus only */

static void functionality_is_a_full_unsigned_long(void)
{
	struct pbus_i2c *i2c = open_fake(0x8000000012345678UL);
	REQUIRE(i2c);
	unsigned long f = 0;
	REQUIRE_EQ(pbus_i2c_get_functionality(i2c, &f), 0);
	REQUIRE(f == 0x8000000012345678UL);
	close_fake(i2c);
}

static void register_write_is_one_message(void)
{
	struct pbus_i2c *i2c = open_fake(FULL_FUNCS);
	REQUIRE(i2c);
	const uint8_t data[3] = { 0x11, 0x22, 0x33 };
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0x10, data, 3), -EDESTADDRREQ); /* never to 0x00 */
	REQUIRE_EQ(fake.calls, 0);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x48, 0), 0);
	REQUIRE_EQ(fake.request, I2C_SLAVE);
	REQUIRE_EQ(fake.arg_value, 0x48);
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0x10, data, 3), 0);
	REQUIRE_EQ(fake.request, I2C_RDWR);
	REQUIRE_EQ(fake.nmsgs, 1);
	REQUIRE_EQ(fake.msgs[0].addr, 0x48);
	REQUIRE_EQ(fake.msgs[0].flags, 0);
	REQUIRE_EQ(fake.msgs[0].len, 4);
	REQUIRE(memcmp(fake.data[0], "\x10\x11\x22\x33", 4) == 0);
	uint8_t big[PBUS_I2C_REGISTER_WRITE_MAX + 1] = { 0 };
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0, big, sizeof(big)), -EMSGSIZE);
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0, big, PBUS_I2C_REGISTER_WRITE_MAX), 0);
	REQUIRE_EQ(fake.msgs[0].len, PBUS_I2C_REGISTER_WRITE_MAX + 1);
	close_fake(i2c);
}

static void register_read_is_write_then_read(void)
{
	struct pbus_i2c *i2c = open_fake(FULL_FUNCS);
	REQUIRE(i2c);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x2a5, PBUS_I2C_ADDRESS_TEN_BIT), 0);
	uint8_t out[2] = { 0 };
	REQUIRE_EQ(pbus_i2c_read_register(i2c, 0x07, out, 2), 0);
	REQUIRE_EQ(fake.nmsgs, 2);
	REQUIRE_EQ(fake.msgs[0].addr, 0x2a5);
	REQUIRE_EQ(fake.msgs[0].flags, I2C_M_TEN);
	REQUIRE_EQ(fake.msgs[0].len, 1);
	REQUIRE_EQ(fake.data[0][0], 0x07);
	REQUIRE_EQ(fake.msgs[1].flags, I2C_M_TEN | I2C_M_RD);
	REQUIRE_EQ(fake.msgs[1].len, 2);
	REQUIRE(out[0] == 0xa0 && out[1] == 0xa1);
	close_fake(i2c);
}

static void smbus_only_adapter_same_wire_bytes(void)
{
	/* On an SMBus-only adapter the register helpers use the SMBus transfer
	 * that sends the same single message. */
	struct pbus_i2c *i2c = open_fake(STUB_FUNCS);
	REQUIRE(i2c);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x50, 0), 0);
	const uint8_t data[3] = { 1, 2, 3 };
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0x20, data, 3), 0);
	REQUIRE_EQ(fake.request, I2C_SMBUS);
	REQUIRE_EQ(fake.smbus.size, I2C_SMBUS_I2C_BLOCK_DATA);
	REQUIRE_EQ(fake.smbus.read_write, I2C_SMBUS_WRITE);
	REQUIRE_EQ(fake.smbus.command, 0x20);
	REQUIRE_EQ(fake.smbus_data.block[0], 3);
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0x21, data, 1), 0);
	REQUIRE_EQ(fake.smbus.size, I2C_SMBUS_BYTE_DATA);
	uint8_t out[4];
	REQUIRE_EQ(pbus_i2c_read_register(i2c, 0x30, out, 4), 0);
	REQUIRE_EQ(fake.smbus.size, I2C_SMBUS_I2C_BLOCK_DATA);
	REQUIRE(out[0] == 0x11 && out[3] == 0x14);
	uint8_t big[33] = { 0 };
	REQUIRE_EQ(pbus_i2c_write_register(i2c, 0, big, 33), -EOPNOTSUPP);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x50, PBUS_I2C_ADDRESS_TEN_BIT), -EOPNOTSUPP);
	REQUIRE_EQ(pbus_i2c_set_pec(i2c, true), -EOPNOTSUPP);
	REQUIRE_EQ(pbus_i2c_set_pec(i2c, false), 0);
	close_fake(i2c);
}

static void smbus_calls(void)
{
	struct pbus_i2c *i2c = open_fake(FULL_FUNCS);
	REQUIRE(i2c);
	REQUIRE_EQ(pbus_i2c_smbus_read_byte_data(i2c, 1), -EDESTADDRREQ);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x49, PBUS_I2C_ADDRESS_FORCE), 0);
	REQUIRE_EQ(fake.request, I2C_SLAVE_FORCE);
	REQUIRE_EQ(pbus_i2c_get_address(i2c), 0x49);

	REQUIRE_EQ(pbus_i2c_smbus_quick(i2c, 1), 0);
	REQUIRE(fake.smbus.size == I2C_SMBUS_QUICK && fake.smbus.read_write == I2C_SMBUS_READ);
	REQUIRE_EQ(pbus_i2c_smbus_read_byte(i2c), 0x5a);
	REQUIRE_EQ(fake.smbus.size, I2C_SMBUS_BYTE);
	REQUIRE_EQ(pbus_i2c_smbus_write_byte(i2c, 0x77), 0);
	REQUIRE(fake.smbus.command == 0x77 && fake.smbus.read_write == I2C_SMBUS_WRITE);
	REQUIRE_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x10), 0x5a);
	REQUIRE(fake.smbus.command == 0x10 && fake.smbus.size == I2C_SMBUS_BYTE_DATA);
	REQUIRE_EQ(pbus_i2c_smbus_write_byte_data(i2c, 0x11, 0xab), 0);
	REQUIRE_EQ(fake.smbus_data.byte, 0xab);
	REQUIRE_EQ(pbus_i2c_smbus_read_word_data(i2c, 0x12), 0xbeef);
	REQUIRE_EQ(pbus_i2c_smbus_write_word_data(i2c, 0x12, 0x1234), 0);
	REQUIRE_EQ(fake.smbus_data.word, 0x1234);
	REQUIRE_EQ(pbus_i2c_smbus_process_call(i2c, 0x13, 0x4242), 0xbeef);
	REQUIRE_EQ(fake.smbus_data.word, 0x4242);
	uint8_t block[32];
	REQUIRE_EQ(pbus_i2c_smbus_read_block_data(i2c, 0x20, block), 4);
	REQUIRE(block[0] == 1 && block[3] == 4);
	fake.block_count = 0;
	REQUIRE_EQ(pbus_i2c_smbus_read_block_data(i2c, 0x20, block), -EPROTO);
	fake.block_count = 33;
	REQUIRE_EQ(pbus_i2c_smbus_read_block_data(i2c, 0x20, block), -EPROTO);
	const uint8_t w[3] = { 9, 8, 7 };
	REQUIRE_EQ(pbus_i2c_smbus_write_block_data(i2c, 0x21, w, 3), 0);
	REQUIRE(fake.smbus.size == I2C_SMBUS_BLOCK_DATA && fake.smbus_data.block[0] == 3 &&
	       fake.smbus_data.block[3] == 7);
	REQUIRE_EQ(pbus_i2c_smbus_write_block_data(i2c, 0x21, w, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_read_i2c_block_data(i2c, 0x22, block, 5), 5);
	REQUIRE_EQ(block[4], 0x15);
	REQUIRE_EQ(pbus_i2c_smbus_read_i2c_block_data(i2c, 0x22, block, 33), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_write_i2c_block_data(i2c, 0x23, w, 2), 0);
	REQUIRE(fake.smbus.size == I2C_SMBUS_I2C_BLOCK_DATA && fake.smbus_data.block[0] == 2);

	/* Hot path: no allocation. */
	alloc_count = 0;
	alloc_counting = 1;
	for (int i = 0; i < 1000; i++) {
		pbus_i2c_smbus_read_byte_data(i2c, 0x10);
		pbus_i2c_smbus_write_word_data(i2c, 0x10, 1);
		pbus_i2c_write_register(i2c, 0x10, w, 3);
		pbus_i2c_read_register(i2c, 0x10, block, 4);
	}
	alloc_counting = 0;
	REQUIRE_EQ(alloc_count, 0);
	close_fake(i2c);
}

static void errors_never_swallowed(void)
{
	struct pbus_i2c *i2c = open_fake(FULL_FUNCS);
	REQUIRE(i2c);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x48, 0), 0);
	static const int errs[] = { -ENXIO, -EREMOTEIO, -ETIMEDOUT, -EAGAIN, -EBADMSG, -ENODEV, -EOPNOTSUPP };
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		fake.fail_with = errs[i];
		REQUIRE_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0), errs[i]);
		fake.fail_with = errs[i];
		REQUIRE_EQ(pbus_i2c_smbus_write_byte_data(i2c, 0, 0), errs[i]);
		fake.fail_with = errs[i];
		REQUIRE_EQ(pbus_i2c_write_register(i2c, 0, "x", 1), errs[i]);
		fake.fail_with = errs[i];
		REQUIRE_EQ(pbus_i2c_read_register(i2c, 0, (uint8_t[1]){ 0 }, 1), errs[i]);
	}
	/* A failed address change leaves the old address in effect. */
	fake.fail_with = -EBUSY;
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x50, 0), -EBUSY);
	REQUIRE_EQ(pbus_i2c_get_address(i2c), 0x48);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x80, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x400, PBUS_I2C_ADDRESS_TEN_BIT), -EINVAL);
	REQUIRE_EQ(pbus_i2c_set_address(i2c, 0x10, 0x80), -EINVAL);
	struct pbus_i2c_message m = { .address = 0x48, .length = 1, .buffer = NULL };
	REQUIRE_EQ(pbus_i2c_transfer(i2c, &m, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_transfer(i2c, &m, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_transfer(i2c, &m, 43), -EINVAL);
	close_fake(i2c);

	struct pbus_i2c *none = NULL;
	REQUIRE_EQ(pbus_i2c_open("/dev/null", &none), -ENOTTY); /* real ioctl */
	REQUIRE_EQ(pbus_i2c_open_bus(4711, &none), -ENOENT);
	REQUIRE(none == NULL);
}

int main(void)
{
	pbus_check_suite("hw/i2c");
	RUN_CASE(functionality_is_a_full_unsigned_long);
	RUN_CASE(register_write_is_one_message);
	RUN_CASE(register_read_is_write_then_read);
	RUN_CASE(smbus_only_adapter_same_wire_bytes);
	RUN_CASE(smbus_calls);
	RUN_CASE(errors_never_swallowed);
	CHECK_EXIT();
}
