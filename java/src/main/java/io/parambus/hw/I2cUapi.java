package io.parambus.hw;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;

/**
 * The i2c-dev uAPI ({@code <linux/i2c-dev.h>}, {@code <linux/i2c.h>}) declared once:
 * the ioctl request numbers, the structs of {@code I2C_RDWR} and {@code I2C_SMBUS} and
 * their offsets, the SMBus transfer kinds. {@code I2cLayoutTest} checks every value
 * against the system headers. The request numbers of i2c-dev are plain numbers, not
 * {@code _IOW}-encoded ones.
 */
final class I2cUapi {
    private I2cUapi() {
    }

    static final long I2C_RETRIES = 0x0701, I2C_TIMEOUT = 0x0702, I2C_SLAVE = 0x0703, I2C_TENBIT = 0x0704,
            I2C_FUNCS = 0x0705, I2C_SLAVE_FORCE = 0x0706, I2C_RDWR = 0x0707, I2C_PEC = 0x0708, I2C_SMBUS = 0x0720;

    /** Most messages in one {@code I2C_RDWR} ({@code I2C_RDWR_IOCTL_MAX_MSGS}). */
    static final int I2C_RDWR_IOCTL_MAX_MSGS = 42;
    /** The longest message i2c-dev accepts (its own check in {@code i2cdev_ioctl_rdwr}). */
    static final int MESSAGE_LENGTH_MAX = 8192;
    /** {@code I2C_SMBUS_BLOCK_MAX}. */
    static final int I2C_SMBUS_BLOCK_MAX = 32;

    static final int I2C_SMBUS_READ = 1, I2C_SMBUS_WRITE = 0;
    static final int I2C_SMBUS_QUICK = 0, I2C_SMBUS_BYTE = 1, I2C_SMBUS_BYTE_DATA = 2, I2C_SMBUS_WORD_DATA = 3,
            I2C_SMBUS_PROC_CALL = 4, I2C_SMBUS_BLOCK_DATA = 5, I2C_SMBUS_BLOCK_PROC_CALL = 7,
            I2C_SMBUS_I2C_BLOCK_DATA = 8;

    /** {@code struct i2c_msg}. */
    static final StructLayout I2C_MSG = MemoryLayout.structLayout(
            JAVA_SHORT.withName("addr"),
            JAVA_SHORT.withName("flags"),
            JAVA_SHORT.withName("len"),
            MemoryLayout.paddingLayout(2),
            ADDRESS.withName("buf")).withName("i2c_msg");
    static final long MSG_SIZE = I2C_MSG.byteSize();
    static final long MSG_ADDR = I2C_MSG.byteOffset(groupElement("addr"));
    static final long MSG_FLAGS = I2C_MSG.byteOffset(groupElement("flags"));
    static final long MSG_LEN = I2C_MSG.byteOffset(groupElement("len"));
    static final long MSG_BUF = I2C_MSG.byteOffset(groupElement("buf"));

    /** {@code struct i2c_rdwr_ioctl_data}. */
    static final StructLayout RDWR_DATA = MemoryLayout.structLayout(
            ADDRESS.withName("msgs"),
            JAVA_INT.withName("nmsgs"),
            MemoryLayout.paddingLayout(4)).withName("i2c_rdwr_ioctl_data");
    static final long RDWR_SIZE = RDWR_DATA.byteSize();
    static final long RDWR_MSGS = RDWR_DATA.byteOffset(groupElement("msgs"));
    static final long RDWR_NMSGS = RDWR_DATA.byteOffset(groupElement("nmsgs"));

    /** {@code union i2c_smbus_data}: a byte, a word, or a block whose byte 0 is the length. */
    static final UnionLayout SMBUS_DATA = MemoryLayout.unionLayout(
            JAVA_BYTE.withName("byte"),
            JAVA_SHORT.withName("word"),
            MemoryLayout.sequenceLayout(I2C_SMBUS_BLOCK_MAX + 2, JAVA_BYTE).withName("block"))
            .withName("i2c_smbus_data");
    static final long SMBUS_DATA_SIZE = SMBUS_DATA.byteSize();

    /** {@code struct i2c_smbus_ioctl_data}. */
    static final StructLayout SMBUS_IOCTL_DATA = MemoryLayout.structLayout(
            JAVA_BYTE.withName("read_write"),
            JAVA_BYTE.withName("command"),
            MemoryLayout.paddingLayout(2),
            JAVA_INT.withName("size"),
            ADDRESS.withName("data")).withName("i2c_smbus_ioctl_data");
    static final long SMBUS_ARGS_SIZE = SMBUS_IOCTL_DATA.byteSize();
    static final long SMBUS_READ_WRITE = SMBUS_IOCTL_DATA.byteOffset(groupElement("read_write"));
    static final long SMBUS_COMMAND = SMBUS_IOCTL_DATA.byteOffset(groupElement("command"));
    static final long SMBUS_SIZE = SMBUS_IOCTL_DATA.byteOffset(groupElement("size"));
    static final long SMBUS_DATA_PTR = SMBUS_IOCTL_DATA.byteOffset(groupElement("data"));
}
