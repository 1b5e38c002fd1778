package io.parambus.hw;

/**
 * One capability an I2C adapter reports through {@code I2C_FUNCS}: the kernel's
 * {@code I2C_FUNC_*} bits of {@code <linux/i2c.h>}, by name. What an adapter lacks,
 * the kernel refuses ({@code EOPNOTSUPP}, or the adapter driver's own error): check
 * {@link I2cFunctionality#has(I2cFunction)} to choose a way before trying one.
 */
public enum I2cFunction {
    /** Plain I2C messages ({@code I2C_RDWR}, read/write of the node): {@code I2C_FUNC_I2C}. */
    I2C(0x00000001),
    /** 10-bit addresses ({@code I2C_M_TEN}): {@code I2C_FUNC_10BIT_ADDR}. */
    TEN_BIT_ADDRESS(0x00000002),
    /** The protocol-mangling message flags (IGNORE_NAK, NO_RD_ACK, REV_DIR_ADDR, STOP). */
    PROTOCOL_MANGLING(0x00000004),
    /** SMBus packet error checking ({@code I2C_PEC}). */
    SMBUS_PEC(0x00000008),
    /** Messages without a (repeated) START ({@code I2C_M_NOSTART}). */
    NOSTART(0x00000010),
    /** The adapter can act as a target (not used by i2c-dev). */
    SLAVE(0x00000020),
    /** SMBus block process call. */
    SMBUS_BLOCK_PROC_CALL(0x00008000),
    /** SMBus quick command. */
    SMBUS_QUICK(0x00010000),
    /** SMBus receive byte. */
    SMBUS_READ_BYTE(0x00020000),
    /** SMBus send byte. */
    SMBUS_WRITE_BYTE(0x00040000),
    /** SMBus read byte data. */
    SMBUS_READ_BYTE_DATA(0x00080000),
    /** SMBus write byte data. */
    SMBUS_WRITE_BYTE_DATA(0x00100000),
    /** SMBus read word data. */
    SMBUS_READ_WORD_DATA(0x00200000),
    /** SMBus write word data. */
    SMBUS_WRITE_WORD_DATA(0x00400000),
    /** SMBus process call. */
    SMBUS_PROC_CALL(0x00800000),
    /** SMBus block read (and {@code I2C_M_RECV_LEN} in {@code I2C_RDWR}). */
    SMBUS_READ_BLOCK_DATA(0x01000000),
    /** SMBus block write. */
    SMBUS_WRITE_BLOCK_DATA(0x02000000),
    /** I2C block read (no count byte). */
    SMBUS_READ_I2C_BLOCK(0x04000000),
    /** I2C block write (no count byte). */
    SMBUS_WRITE_I2C_BLOCK(0x08000000),
    /** SMBus host notify. */
    SMBUS_HOST_NOTIFY(0x10000000);

    private final long mask;

    I2cFunction(long mask) {
        this.mask = mask;
    }

    /** The kernel's bit, e.g. {@code 0x1} for {@link #I2C}. */
    public long mask() {
        return mask;
    }
}
