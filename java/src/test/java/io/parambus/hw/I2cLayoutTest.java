package io.parambus.hw;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Everything the I2C classes declare by hand — struct sizes and offsets, ioctl numbers,
 * SMBus transfer kinds, message flags, functionality bits, limits — is what
 * {@code <linux/i2c-dev.h>} and {@code <linux/i2c.h>} say (tests/java/c/uapi-layout.c,
 * section i2c): every line of that section must be matched here, and nothing else.
 */
class I2cLayoutTest {
    @Test
    void structsIoctlsAndFlagsAreTheKernels() throws Exception {
        Map<String, Long> j = new TreeMap<>();
        j.put("i2c_msg_size", I2cUapi.MSG_SIZE);
        j.put("i2c_msg_addr", I2cUapi.MSG_ADDR);
        j.put("i2c_msg_flags", I2cUapi.MSG_FLAGS);
        j.put("i2c_msg_len", I2cUapi.MSG_LEN);
        j.put("i2c_msg_buf", I2cUapi.MSG_BUF);
        j.put("i2c_rdwr_ioctl_data_size", I2cUapi.RDWR_SIZE);
        j.put("i2c_rdwr_ioctl_data_msgs", I2cUapi.RDWR_MSGS);
        j.put("i2c_rdwr_ioctl_data_nmsgs", I2cUapi.RDWR_NMSGS);
        j.put("i2c_smbus_ioctl_data_size", I2cUapi.SMBUS_ARGS_SIZE);
        j.put("i2c_smbus_ioctl_data_read_write", I2cUapi.SMBUS_READ_WRITE);
        j.put("i2c_smbus_ioctl_data_command", I2cUapi.SMBUS_COMMAND);
        j.put("i2c_smbus_ioctl_data_size_field", I2cUapi.SMBUS_SIZE);
        j.put("i2c_smbus_ioctl_data_data", I2cUapi.SMBUS_DATA_PTR);
        j.put("i2c_smbus_data_size", I2cUapi.SMBUS_DATA_SIZE);
        j.put("I2C_RETRIES", I2cUapi.I2C_RETRIES);
        j.put("I2C_TIMEOUT", I2cUapi.I2C_TIMEOUT);
        j.put("I2C_SLAVE", I2cUapi.I2C_SLAVE);
        j.put("I2C_SLAVE_FORCE", I2cUapi.I2C_SLAVE_FORCE);
        j.put("I2C_TENBIT", I2cUapi.I2C_TENBIT);
        j.put("I2C_FUNCS", I2cUapi.I2C_FUNCS);
        j.put("I2C_RDWR", I2cUapi.I2C_RDWR);
        j.put("I2C_PEC", I2cUapi.I2C_PEC);
        j.put("I2C_SMBUS", I2cUapi.I2C_SMBUS);
        j.put("I2C_RDWR_IOCTL_MAX_MSGS", (long) I2cUapi.I2C_RDWR_IOCTL_MAX_MSGS);
        j.put("I2C_SMBUS_BLOCK_MAX", (long) I2cUapi.I2C_SMBUS_BLOCK_MAX);
        j.put("I2C_SMBUS_READ", (long) I2cUapi.I2C_SMBUS_READ);
        j.put("I2C_SMBUS_WRITE", (long) I2cUapi.I2C_SMBUS_WRITE);
        j.put("I2C_SMBUS_QUICK", (long) I2cUapi.I2C_SMBUS_QUICK);
        j.put("I2C_SMBUS_BYTE", (long) I2cUapi.I2C_SMBUS_BYTE);
        j.put("I2C_SMBUS_BYTE_DATA", (long) I2cUapi.I2C_SMBUS_BYTE_DATA);
        j.put("I2C_SMBUS_WORD_DATA", (long) I2cUapi.I2C_SMBUS_WORD_DATA);
        j.put("I2C_SMBUS_PROC_CALL", (long) I2cUapi.I2C_SMBUS_PROC_CALL);
        j.put("I2C_SMBUS_BLOCK_DATA", (long) I2cUapi.I2C_SMBUS_BLOCK_DATA);
        j.put("I2C_SMBUS_BLOCK_PROC_CALL", (long) I2cUapi.I2C_SMBUS_BLOCK_PROC_CALL);
        j.put("I2C_SMBUS_I2C_BLOCK_DATA", (long) I2cUapi.I2C_SMBUS_I2C_BLOCK_DATA);
        j.put("I2C_M_RD", (long) I2cMessage.READ);
        j.put("I2C_M_TEN", (long) I2cMessage.TEN_BIT);
        j.put("I2C_M_RECV_LEN", (long) I2cMessage.RECV_LEN);
        j.put("I2C_M_NO_RD_ACK", (long) I2cMessage.NO_RD_ACK);
        j.put("I2C_M_IGNORE_NAK", (long) I2cMessage.IGNORE_NAK);
        j.put("I2C_M_REV_DIR_ADDR", (long) I2cMessage.REV_DIR_ADDR);
        j.put("I2C_M_NOSTART", (long) I2cMessage.NO_START);
        j.put("I2C_M_STOP", (long) I2cMessage.STOP);
        for (I2cFunction f : I2cFunction.values()) {
            j.put(kernelName(f), f.mask());
        }
        UapiLayouts.assertSame("i2c", j);
    }

    /** I2C_FUNC_* of a constant: the Java names spell out two of the kernel's abbreviations. */
    private static String kernelName(I2cFunction f) {
        return switch (f) {
            case TEN_BIT_ADDRESS -> "I2C_FUNC_10BIT_ADDR";
            default -> "I2C_FUNC_" + f.name();
        };
    }
}
