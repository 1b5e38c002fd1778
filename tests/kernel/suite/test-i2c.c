/* SPDX-License-Identifier: MIT */
/*
 * test-i2c.c - libparambus-hw I2C/SMBus against i2c-stub and the project's
 * mock adapter (ENVIRONMENT.md section 4).
 *
 * The mock adapter records every transfer as the messages on the wire
 * (debugfs last_xfer), so "one message" and "repeated start" are checked
 * where they happen, not inferred.  Register files: 0x48 reg[n] = n,
 * 0x49 reg[n] = 0xff - n, 0x51 16-bit-addressed EEPROM mem[n] = n & 0xff,
 * 10-bit 0x2a5 reg[n] = n.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/suite.h"
#include "parambus/hw/i2c.h"

#define DBG "/sys/kernel/debug/pbus-mock-i2c"
#define MOCK_DRV "/sys/bus/platform/drivers/pbus-mock-i2c"

static int stub_bus = -1, mock_bus = -1;

static struct pbus_i2c *open_at(int bus, uint16_t addr, unsigned int flags)
{
	struct pbus_i2c *i2c = NULL;
	if (bus < 0 || pbus_i2c_open_bus((unsigned int)bus, &i2c) < 0)
		return NULL;
	if (pbus_i2c_set_address(i2c, addr, flags) < 0) {
		pbus_i2c_close(i2c);
		return NULL;
	}
	return i2c;
}

static const char *last_xfer(void)
{
	return suite_read(DBG "/last_xfer");
}

static uint8_t crc8(uint8_t crc, uint8_t byte)
{
	crc ^= byte;
	for (int i = 0; i < 8; i++)
		crc = (uint8_t)((crc & 0x80) ? (crc << 1) ^ 0x07 : crc << 1);
	return crc;
}

/* ---- i2c-stub: an SMBus-only adapter ----------------------------------- */

static const char *stub_functionality(void)
{
	struct pbus_i2c *i2c = open_at(stub_bus, 0x50, 0);
	T_EXPECT(i2c);
	unsigned long f = 0;
	T_EQ(pbus_i2c_get_functionality(i2c, &f), 0);
	T_EQ(f, 0x0c7f0000UL);
	T_EXPECT(fcntl(pbus_i2c_get_fd(i2c), F_GETFD) & FD_CLOEXEC);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *stub_smbus_calls(void)
{
	struct pbus_i2c *i2c = open_at(stub_bus, 0x50, 0);
	T_EXPECT(i2c);
	T_EQ(pbus_i2c_smbus_quick(i2c, 0), 0);
	T_EQ(pbus_i2c_smbus_write_byte_data(i2c, 0x10, 0xab), 0);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x10), 0xab);
	T_EQ(pbus_i2c_smbus_write_word_data(i2c, 0x20, 0xbeef), 0);
	T_EQ(pbus_i2c_smbus_read_word_data(i2c, 0x20), 0xbeef);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x20), 0xef); /* little-endian */
	const uint8_t blk[5] = { 1, 2, 3, 4, 5 };
	T_EQ(pbus_i2c_smbus_write_i2c_block_data(i2c, 0x30, blk, 5), 0);
	uint8_t out[32];
	T_EQ(pbus_i2c_smbus_read_i2c_block_data(i2c, 0x30, out, 5), 5);
	T_EXPECT(memcmp(out, blk, 5) == 0);
	T_EQ(pbus_i2c_smbus_write_byte(i2c, 0x31), 0); /* sets the stub's pointer */
	T_EQ(pbus_i2c_smbus_read_byte(i2c), 2);
	/* block data is not offered by i2c-stub: the error is reported */
	int r = pbus_i2c_smbus_read_block_data(i2c, 0x30, out);
	T_EXPECT(r == -EOPNOTSUPP || r == -EINVAL);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *stub_register_helpers_and_limits(void)
{
	struct pbus_i2c *i2c = open_at(stub_bus, 0x50, 0);
	T_EXPECT(i2c);
	const uint8_t data[4] = { 0xde, 0xad, 0xbe, 0xef };
	T_EQ(pbus_i2c_write_register(i2c, 0x40, data, 4), 0);
	uint8_t out[4] = { 0 };
	T_EQ(pbus_i2c_read_register(i2c, 0x40, out, 4), 0);
	T_EXPECT(memcmp(out, data, 4) == 0);
	/* what the stub cannot do is refused with the kernel's error */
	struct pbus_i2c_message m = { .address = 0x50, .length = 1, .buffer = out };
	T_EQ(pbus_i2c_transfer(i2c, &m, 1), -EOPNOTSUPP);
	T_EQ(pbus_i2c_set_pec(i2c, true), -EOPNOTSUPP);
	T_EQ(pbus_i2c_set_address(i2c, 0x150, PBUS_I2C_ADDRESS_TEN_BIT), -EOPNOTSUPP);
	T_EQ(pbus_i2c_get_address(i2c), 0x50);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *stub_wrong_address_enxio(void)
{
	struct pbus_i2c *i2c = open_at(stub_bus, 0x51, 0);
	T_EXPECT(i2c);
	/* i2c-stub answers an absent address with ENXIO or ENODEV
	 * depending on the transfer; either way the error reaches the caller */
	int r1 = pbus_i2c_smbus_read_byte_data(i2c, 0);
	int r2 = pbus_i2c_smbus_write_byte_data(i2c, 0, 1);
	int r3 = pbus_i2c_smbus_quick(i2c, 0);
	if ((r1 != -ENXIO && r1 != -ENODEV) || (r2 != -ENXIO && r2 != -ENODEV) || (r3 != -ENXIO && r3 != -ENODEV))
		T_FAIL("absent address: %d %d %d", r1, r2, r3);
	pbus_i2c_close(i2c);
	struct pbus_i2c *none = NULL;
	T_EQ(pbus_i2c_open_bus(99, &none), -ENOENT);
	T_EQ(pbus_i2c_open("/dev/null", &none), -ENOTTY);
	return NULL;
}

/* ---- the mock adapter: plain I2C, 10-bit, PEC -------------------------- */

static const char *mock_functionality(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	unsigned long f = 0;
	T_EQ(pbus_i2c_get_functionality(i2c, &f), 0);
	T_EQ(f, 0x0fff800bUL);
	T_EQ(pbus_i2c_set_timeout(i2c, 250), 0);
	T_EQ(pbus_i2c_set_retries(i2c, 2), 0);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x03), 0x03);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *register_write_is_one_message(void)
{
	/* Pi4J: "an I2C register write split into two messages with a
	 * repeated start, so the device never updated". */
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	const uint8_t data[3] = { 0x11, 0x22, 0x33 };
	T_EQ(pbus_i2c_write_register(i2c, 0x10, data, 3), 0);
	const char *x = last_xfer();
	T_EXPECT(x);
	T_EXPECT(strstr(x, "kind=i2c ret=1 nmsgs=1\n"));
	T_EXPECT(strstr(x, "msg=0 addr=0x48 flags=0x0000 len=4 data=10 11 22 33\n"));
	T_EXPECT(suite_file_contains(DBG "/0x48/regs", "10: 11 22 33 13 14"));
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *register_read_repeated_start(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x49, 0);
	T_EXPECT(i2c);
	uint8_t out[3] = { 0 };
	T_EQ(pbus_i2c_read_register(i2c, 0x05, out, 3), 0);
	T_EXPECT(out[0] == 0xfa && out[1] == 0xf9 && out[2] == 0xf8);
	const char *x = last_xfer();
	T_EXPECT(x && strstr(x, "kind=i2c ret=2 nmsgs=2\n"));
	T_EXPECT(strstr(x, "msg=0 addr=0x49 flags=0x0000 len=1 data=05\n"));
	T_EXPECT(strstr(x, "msg=1 addr=0x49 flags=0x0001 len=3 data=fa f9 f8\n"));
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *rdwr_several_messages_and_addresses(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	uint8_t w1[1] = { 0x20 }, r1[2], w2[1] = { 0x20 }, r2[2];
	struct pbus_i2c_message m[4] = {
		{ .address = 0x48, .flags = 0, .length = 1, .buffer = w1 },
		{ .address = 0x48, .flags = PBUS_I2C_MESSAGE_READ, .length = 2, .buffer = r1 },
		{ .address = 0x49, .flags = 0, .length = 1, .buffer = w2 },
		{ .address = 0x49, .flags = PBUS_I2C_MESSAGE_READ, .length = 2, .buffer = r2 },
	};
	T_EQ(pbus_i2c_transfer(i2c, m, 4), 0);
	T_EXPECT(r1[0] == 0x20 && r1[1] == 0x21);
	T_EXPECT(r2[0] == 0xdf && r2[1] == 0xde);
	T_EXPECT(suite_file_contains(DBG "/last_xfer", "kind=i2c ret=4 nmsgs=4"));

	/* 16-bit register pointer: write-then-read */
	T_EQ(pbus_i2c_set_address(i2c, 0x51, 0), 0);
	const uint8_t ptr[2] = { 0x01, 0x02 };
	uint8_t mem[4];
	T_EQ(pbus_i2c_write_read(i2c, ptr, 2, mem, 4), 0);
	T_EXPECT(mem[0] == 0x02 && mem[1] == 0x03 && mem[2] == 0x04 && mem[3] == 0x05);
	/* plain write and read (one message each) */
	T_EQ(pbus_i2c_set_address(i2c, 0x48, 0), 0);
	const uint8_t wr[3] = { 0x60, 0xaa, 0xbb };
	T_EQ(pbus_i2c_write(i2c, wr, 3), 3);
	T_EXPECT(suite_file_contains(DBG "/last_xfer", "msg=0 addr=0x48 flags=0x0000 len=3 data=60 aa bb"));
	T_EQ(pbus_i2c_write(i2c, wr, 1), 1);
	uint8_t rd[2];
	T_EQ(pbus_i2c_read(i2c, rd, 2), 2);
	T_EXPECT(rd[0] == 0xaa && rd[1] == 0xbb);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *ten_bit_address(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x2a5, PBUS_I2C_ADDRESS_TEN_BIT);
	T_EXPECT(i2c);
	T_EQ(pbus_i2c_get_address(i2c), 0x2a5);
	uint8_t out[2];
	T_EQ(pbus_i2c_read_register(i2c, 0x33, out, 2), 0);
	T_EXPECT(out[0] == 0x33 && out[1] == 0x34);
	const char *x = last_xfer();
	T_EXPECT(x && strstr(x, "msg=0 addr=0x2a5 flags=0x0010 len=1"));
	T_EXPECT(strstr(x, "msg=1 addr=0x2a5 flags=0x0011 len=2"));
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x40), 0x40);
	/* back to 7 bits on the same handle */
	T_EQ(pbus_i2c_set_address(i2c, 0x48, 0), 0);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x41), 0x41);
	T_EQ(pbus_i2c_set_address(i2c, 0x80, 0), -EINVAL);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *mock_smbus_every_kind(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	T_EQ(pbus_i2c_smbus_quick(i2c, 1), 0);
	T_EQ(pbus_i2c_smbus_write_byte(i2c, 0x70), 0);
	T_EQ(pbus_i2c_smbus_read_byte(i2c), 0x70);
	T_EQ(pbus_i2c_smbus_write_byte_data(i2c, 0x71, 0x5a), 0);
	const char *x = last_xfer();
	T_EXPECT(x && strstr(x, "kind=smbus") && strstr(x, "nmsgs=1") &&
		 strstr(x, "msg=0 addr=0x48 flags=0x0000 len=2 data=71 5a"));
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x71), 0x5a);
	T_EQ(pbus_i2c_smbus_write_word_data(i2c, 0x72, 0x1234), 0);
	T_EXPECT(suite_file_contains(DBG "/0x48/regs", "70: 70 5a 34 12"));
	T_EQ(pbus_i2c_smbus_read_word_data(i2c, 0x72), 0x1234);
	/* process call: writes reg 0x80/0x81, reads back 0x82/0x83 */
	T_EQ(pbus_i2c_smbus_process_call(i2c, 0x80, 0xbeef), 0x8382);
	const uint8_t blk[4] = { 9, 8, 7, 6 };
	T_EQ(pbus_i2c_smbus_write_block_data(i2c, 0x90, blk, 4), 0);
	T_EXPECT(suite_file_contains(DBG "/0x48/regs", "90: 04 09 08 07 06"));
	uint8_t out[32];
	T_EQ(pbus_i2c_smbus_read_block_data(i2c, 0x90, out), 4);
	T_EXPECT(memcmp(out, blk, 4) == 0);
	/* a block count of 0 is a protocol error, reported */
	T_EQ(kenv_write_file(DBG "/0x48/regs", "a0 00"), 0);
	T_EQ(pbus_i2c_smbus_read_block_data(i2c, 0xa0, out), -EPROTO);
	/* block process call: write 2 bytes at 0xb0 (count 2 at 0xb0), read
	 * the block that follows (count at 0xb3) */
	T_EQ(kenv_write_file(DBG "/0x48/regs", "b3 03 aa bb cc"), 0);
	const uint8_t bw[2] = { 0x11, 0x22 };
	T_EQ(pbus_i2c_smbus_block_process_call(i2c, 0xb0, bw, 2, out), 3);
	T_EXPECT(out[0] == 0xaa && out[1] == 0xbb && out[2] == 0xcc);
	T_EQ(pbus_i2c_smbus_write_i2c_block_data(i2c, 0xc0, blk, 4), 0);
	T_EQ(pbus_i2c_smbus_read_i2c_block_data(i2c, 0xc0, out, 4), 4);
	T_EXPECT(memcmp(out, blk, 4) == 0);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *pec(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	T_EQ(pbus_i2c_set_pec(i2c, true), 0);
	T_EQ(pbus_i2c_smbus_write_byte_data(i2c, 0x10, 0xab), 0);
	uint8_t c = crc8(crc8(crc8(0, 0x48 << 1), 0x10), 0xab);
	char want[96];
	snprintf(want, sizeof(want), "msg=0 addr=0x48 flags=0x0000 len=3 data=10 ab %02x\n", c);
	const char *x = last_xfer();
	T_EXPECT(x && strstr(x, "pec=1"));
	if (!strstr(x, want))
		T_FAIL("no '%.40s' in last_xfer", want);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x10), 0xab);
	/* a corrupted PEC on a read is reported */
	T_EQ(kenv_write_file(DBG "/fault", "bad-pec"), 0);
	int r = pbus_i2c_smbus_read_byte_data(i2c, 0x10);
	kenv_write_file(DBG "/fault", "none");
	T_EQ(r, -EBADMSG);
	T_EQ(pbus_i2c_set_pec(i2c, false), 0);
	T_EQ(pbus_i2c_smbus_write_byte_data(i2c, 0x10, 0x10), 0);
	T_EXPECT(suite_file_contains(DBG "/last_xfer", "pec=0"));
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *wrong_address_and_unplugged(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x30, 0);
	T_EXPECT(i2c);
	uint8_t b[2];
	T_EQ(pbus_i2c_read_register(i2c, 0, b, 1), -ENXIO);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0), -ENXIO);
	T_EQ(pbus_i2c_set_address(i2c, 0x48, 0), 0);
	T_EQ(pbus_i2c_read_register(i2c, 0, b, 1), 0);
	/* the device goes away while in use, then comes back */
	T_EQ(kenv_write_file(DBG "/0x48/present", "0"), 0);
	int r1 = pbus_i2c_read_register(i2c, 0, b, 1);
	int r2 = pbus_i2c_smbus_write_byte_data(i2c, 0, 1);
	T_EQ(kenv_write_file(DBG "/0x48/present", "1"), 0);
	T_EQ(r1, -ENXIO);
	T_EQ(r2, -ENXIO);
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x05), 0x05);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *bus_faults_reported(void)
{
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	static const struct {
		const char *fault;
		int err;
	} f[] = { { "nak", -ENXIO }, { "timeout", -ETIMEDOUT }, { "busy", -EAGAIN } };
	uint8_t b[1];
	for (size_t i = 0; i < 3; i++) {
		T_EQ(kenv_write_file(DBG "/fault", f[i].fault), 0);
		int r1 = pbus_i2c_smbus_read_byte_data(i2c, 0);
		int r2 = pbus_i2c_write_register(i2c, 0, "x", 1);
		int r3 = pbus_i2c_read_register(i2c, 0, b, 1);
		kenv_write_file(DBG "/fault", "none");
		if (r1 != f[i].err || r2 != f[i].err || r3 != f[i].err)
			T_FAIL("fault %s: %d %d %d, expected %d", f[i].fault, r1, r2, r3, f[i].err);
	}
	T_EQ(pbus_i2c_smbus_read_byte_data(i2c, 0x07), 0x07);
	pbus_i2c_close(i2c);
	return NULL;
}

static const char *adapter_removed_while_open(void)
{
	/* Unbinding blocks until every /dev/i2c-N user closes, so a child
	 * unbinds while we still hold the bus; we close, the unbind completes,
	 * the node is gone, and the library says so. */
	struct pbus_i2c *i2c = open_at(mock_bus, 0x48, 0);
	T_EXPECT(i2c);
	pid_t pid = fork();
	if (pid == 0) {
		/* the child inherited our descriptor: it must not hold the
		 * adapter itself, or the unbind waits for it forever */
		pbus_i2c_close(i2c);
		int r = kenv_unbind(MOCK_DRV, "pbus-mock-i2c.0");
		_exit(r == 0 ? 0 : 1);
	}
	T_EXPECT(pid > 0);
	suite_sleep_ms(300);
	int r = pbus_i2c_smbus_read_byte_data(i2c, 0x01); /* must return, whatever it says */
	(void)r;
	pbus_i2c_close(i2c);
	int status = 0;
	T_EQ(waitpid(pid, &status, 0), pid);
	T_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char path[32];
	snprintf(path, sizeof(path), "/dev/i2c-%d", mock_bus);
	struct pbus_i2c *gone = NULL;
	T_EQ(pbus_i2c_open(path, &gone), -ENOENT);
	T_EQ(kenv_bind(MOCK_DRV, "pbus-mock-i2c.0"), 0);
	return NULL;
}

int main(void)
{
	suite_init();
	stub_bus = kenv_i2c_bus_by_name("SMBus stub driver");
	mock_bus = kenv_i2c_bus_by_name("pbus-mock-i2c");
	SUITE_RUN("i2c/stub/functionality", stub_functionality);
	SUITE_RUN("i2c/stub/smbus-calls", stub_smbus_calls);
	SUITE_RUN("i2c/stub/register-helpers-and-limits", stub_register_helpers_and_limits);
	SUITE_RUN("i2c/stub/wrong-address-enxio", stub_wrong_address_enxio);
	SUITE_RUN("i2c/mock/functionality", mock_functionality);
	SUITE_RUN("i2c/mock/register-write-one-message", register_write_is_one_message);
	SUITE_RUN("i2c/mock/register-read-repeated-start", register_read_repeated_start);
	SUITE_RUN("i2c/mock/rdwr-several-messages", rdwr_several_messages_and_addresses);
	SUITE_RUN("i2c/mock/ten-bit-address", ten_bit_address);
	SUITE_RUN("i2c/mock/smbus-every-kind", mock_smbus_every_kind);
	SUITE_RUN("i2c/mock/pec", pec);
	SUITE_RUN("i2c/mock/wrong-address-and-unplugged", wrong_address_and_unplugged);
	SUITE_RUN("i2c/mock/bus-faults-reported", bus_faults_reported);
	SUITE_RUN("i2c/mock/adapter-removed-while-open", adapter_removed_while_open);
	return suite_exit();
}
