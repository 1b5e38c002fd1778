package io.parambus.hw;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * One message of an {@code I2C_RDWR} transaction ({@link I2cBus#transfer},
 * {@link I2cDevice#transfer}): a read or a write of a number of bytes, to an address of
 * its own. The messages of one transaction go on the bus as START, message, repeated
 * START, message, ..., STOP.
 *
 * <p>The bytes live in the caller's {@code byte[]} or {@link MemorySegment}: a write
 * message sends what they hold at the time of the transfer, a read message fills them
 * in place. Messages are immutable descriptions and may be kept and transferred again
 * and again (a transfer of kept messages allocates nothing). A native segment is handed
 * to the kernel as it is; an array or a heap segment is copied through the device's
 * native staging buffer.
 *
 * <p>Flags: {@link #READ} and {@link #RECV_LEN} come from the factory
 * ({@link #read}, {@link #readBlock}); the others are added with {@link #withFlags(int)}
 * and need the adapter function named beside each.
 */
public final class I2cMessage {
    /** Read from the device ({@code I2C_M_RD}). */
    public static final int READ = 0x0001;
    /** The address is a 10-bit one ({@code I2C_M_TEN}; needs {@link I2cFunction#TEN_BIT_ADDRESS}). */
    public static final int TEN_BIT = 0x0010;
    /** The first byte read is a count of the bytes that follow ({@code I2C_M_RECV_LEN}; see {@link #readBlock}). */
    public static final int RECV_LEN = 0x0400;
    /** No ACK of the bytes read ({@code I2C_M_NO_RD_ACK}; needs {@link I2cFunction#PROTOCOL_MANGLING}). */
    public static final int NO_RD_ACK = 0x0800;
    /** Go on after a NAK ({@code I2C_M_IGNORE_NAK}; needs {@link I2cFunction#PROTOCOL_MANGLING}). */
    public static final int IGNORE_NAK = 0x1000;
    /** Reverse the R/W bit ({@code I2C_M_REV_DIR_ADDR}; needs {@link I2cFunction#PROTOCOL_MANGLING}). */
    public static final int REV_DIR_ADDR = 0x2000;
    /** No (repeated) START before this message ({@code I2C_M_NOSTART}; needs {@link I2cFunction#NOSTART}). */
    public static final int NO_START = 0x4000;
    /** A STOP after this message ({@code I2C_M_STOP}; needs {@link I2cFunction#PROTOCOL_MANGLING}). */
    public static final int STOP = 0x8000;

    /** The longest message i2c-dev accepts, in bytes. */
    public static final int MAX_LENGTH = I2cUapi.MESSAGE_LENGTH_MAX;
    /** The length a {@link #readBlock} buffer needs: the count byte and the longest SMBus block. */
    public static final int BLOCK_BUFFER_LENGTH = 1 + I2cUapi.I2C_SMBUS_BLOCK_MAX;

    private static final int SETTABLE = TEN_BIT | NO_RD_ACK | IGNORE_NAK | REV_DIR_ADDR | NO_START | STOP;

    final int address;
    final int flags;
    final byte[] array;
    final MemorySegment segment;
    final int offset;
    final int length;

    private I2cMessage(int address, int flags, byte[] array, MemorySegment segment, int offset, int length) {
        if (address < 0 || address > 0x3ff) {
            throw new IllegalArgumentException("I2C address " + address + " is out of 0..0x3ff");
        }
        this.address = address;
        this.flags = flags;
        this.array = array;
        this.segment = segment;
        this.offset = offset;
        this.length = length;
    }

    private static int checkLength(long length) {
        if (length > MAX_LENGTH) {
            throw new IllegalArgumentException("an I2C message of " + length + " bytes: i2c-dev takes at most "
                    + MAX_LENGTH);
        }
        return (int) length;
    }

    /** A write of all of data to address. */
    public static I2cMessage write(int address, byte[] data) {
        return write(address, data, 0, data.length);
    }

    /** A write of data[offset, offset+length) to address. */
    public static I2cMessage write(int address, byte[] data, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, data.length);
        return new I2cMessage(address, 0, data, null, offset, checkLength(length));
    }

    /** A write of the bytes of data (native or heap) to address. */
    public static I2cMessage write(int address, MemorySegment data) {
        return new I2cMessage(address, 0, null, data, 0, checkLength(data.byteSize()));
    }

    /** A read of into.length bytes from address, into into. */
    public static I2cMessage read(int address, byte[] into) {
        return read(address, into, 0, into.length);
    }

    /** A read of length bytes from address, into into[offset, offset+length). */
    public static I2cMessage read(int address, byte[] into, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, into.length);
        return new I2cMessage(address, READ, into, null, offset, checkLength(length));
    }

    /** A read of into.byteSize() bytes from address, into into (native or heap). */
    public static I2cMessage read(int address, MemorySegment into) {
        return new I2cMessage(address, READ, null, into, 0, checkLength(into.byteSize()));
    }

    /**
     * An SMBus-style block read in {@code I2C_RDWR} ({@code I2C_M_RECV_LEN}): the device
     * sends a count (1..32), then that many bytes. into holds at least
     * {@link #BLOCK_BUFFER_LENGTH} bytes; after the transfer into[0] is the count and
     * into[1..count] the data. Needs {@link I2cFunction#SMBUS_READ_BLOCK_DATA}.
     */
    public static I2cMessage readBlock(int address, byte[] into) {
        if (into.length < BLOCK_BUFFER_LENGTH) {
            throw new IllegalArgumentException("a block read needs " + BLOCK_BUFFER_LENGTH + " bytes of room, not "
                    + into.length);
        }
        return new I2cMessage(address, READ | RECV_LEN, into, null, 0, BLOCK_BUFFER_LENGTH);
    }

    /**
     * This message with more flags: any of {@link #TEN_BIT}, {@link #NO_START},
     * {@link #IGNORE_NAK}, {@link #NO_RD_ACK}, {@link #REV_DIR_ADDR}, {@link #STOP}
     * (the direction and {@link #RECV_LEN} come from the factory).
     */
    public I2cMessage withFlags(int more) {
        if ((more & ~SETTABLE) != 0) {
            throw new IllegalArgumentException(String.format("I2C message flags 0x%04x: only 0x%04x may be added",
                    more, SETTABLE));
        }
        return new I2cMessage(address, flags | more, array, segment, offset, length);
    }

    /** This message to a 10-bit address ({@code withFlags(TEN_BIT)}). */
    public I2cMessage tenBit() {
        return withFlags(TEN_BIT);
    }

    /** The target address (7 or 10 bits). */
    public int address() {
        return address;
    }

    /** The {@code I2C_M_*} flags. */
    public int flags() {
        return flags;
    }

    /** The number of bytes. */
    public int length() {
        return length;
    }

    /** Whether this is a read. */
    public boolean isRead() {
        return (flags & READ) != 0;
    }

    /** E.g. {@code "read 0x48 flags=0x0001 len=2"}. */
    @Override
    public String toString() {
        return String.format("%s 0x%02x flags=0x%04x len=%d", isRead() ? "read" : "write", address, flags, length);
    }
}
