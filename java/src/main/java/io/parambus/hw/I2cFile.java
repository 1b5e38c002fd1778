package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One open i2c-dev node with the native memory its transfers use, shared by
 * {@link I2cBus} and {@link I2cDevice}: the {@code i2c_msg} array of the longest
 * {@code I2C_RDWR} (42 messages), the {@code i2c_rdwr_ioctl_data} and
 * {@code i2c_smbus_ioctl_data} structs, the {@code i2c_smbus_data} union, and the
 * staging buffer that arrays and heap segments are copied through. All are allocated
 * from the {@link DeviceFile}'s arena when the node is opened; the staging buffer starts
 * at two messages of i2c-dev's longest (16 KiB) and grows, once per new high-water mark,
 * up to the kernel's limit of 42 × 8192 bytes, when a larger array transfer comes.
 * A call allocates nothing.
 *
 * <p>Threads: every method takes the device lock (a {@link ReentrantLock}: callers that
 * fill the smbus union or the staging buffer first hold it around both).
 */
final class I2cFile implements AutoCloseable {
    static final int EIO = 5, EPROTO = 71, EMSGSIZE = 90, EOPNOTSUPP = 95;

    private static final long INITIAL_STAGING = 2L * I2cUapi.MESSAGE_LENGTH_MAX;
    private static final long MAX_STAGING = (long) I2cUapi.I2C_RDWR_IOCTL_MAX_MSGS * I2cUapi.MESSAGE_LENGTH_MAX;

    final DeviceFile file;
    /** {@code union i2c_smbus_data}, filled by the SMBus callers under the lock. */
    final MemorySegment smbusData;
    private final MemorySegment msgs;
    private final MemorySegment rdwr;
    private final MemorySegment smbusArgs;
    /** What smbusArgs holds (read/write, command, size, data or not), -1 before the first call; under the lock. */
    private long smbusArgsKey = -1;
    private final MemorySegment funcs;
    private MemorySegment staging;
    /** The functionality read at open (I2C_FUNCS), kept current by {@link #readFunctionality}. */
    long functionality;

    private I2cFile(DeviceFile file, String operation) {
        this.file = file;
        Arena a = file.arena();
        msgs = a.allocate(I2cUapi.I2C_MSG.byteSize() * I2cUapi.I2C_RDWR_IOCTL_MAX_MSGS,
                I2cUapi.I2C_MSG.byteAlignment());
        rdwr = a.allocate(I2cUapi.RDWR_DATA);
        smbusArgs = a.allocate(I2cUapi.SMBUS_IOCTL_DATA);
        smbusData = a.allocate(I2cUapi.SMBUS_DATA);
        funcs = a.allocate(JAVA_LONG);
        staging = a.allocate(INITIAL_STAGING, 8);
        rdwr.set(JAVA_LONG, I2cUapi.RDWR_MSGS, msgs.address());
        readFunctionality(operation);
    }

    /**
     * Opens path read-write and reads I2C_FUNCS, which is also the check that the node is
     * an i2c-dev one (anything else answers ENOTTY). Throws HwException naming operation.
     */
    static I2cFile open(String operation, String path) {
        DeviceFile f = DeviceFile.open(operation, path, Native.O_RDWR);
        try {
            return new I2cFile(f, operation);
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    String path() {
        return file.path();
    }

    ReentrantLock lock() {
        return file.lock();
    }

    /**
     * Takes the lock and checks that the descriptor is open (EBADF naming operation
     * otherwise, before any native memory of the closed arena is touched). The caller
     * unlocks {@link #lock()} in a finally block.
     */
    void lockOpen(String operation) {
        ReentrantLock l = file.lock();
        l.lock();
        try {
            file.fd(operation);
        } catch (RuntimeException e) {
            l.unlock();
            throw e;
        }
    }

    /** I2C_FUNCS: the whole unsigned long the kernel writes. */
    long readFunctionality(String operation) {
        ReentrantLock l = file.lock();
        lockOpen(operation);
        try {
            file.ioctl(operation, I2cUapi.I2C_FUNCS, funcs);
            functionality = funcs.get(JAVA_LONG, 0);
            return functionality;
        } finally {
            l.unlock();
        }
    }

    boolean has(I2cFunction f) {
        return (functionality & f.mask()) != 0;
    }

    /** An ioctl with an integer argument (I2C_SLAVE, I2C_TENBIT, I2C_PEC...); detail names what on failure. */
    void ioctl(String operation, long request, long arg, String detail) {
        ReentrantLock l = file.lock();
        lockOpen(operation);
        try {
            int r = Native.ioctl(file.fd(operation), request, arg, file.capture());
            if (r < 0) {
                throw new HwException(operation, file.path(), -r, detail);
            }
        } finally {
            l.unlock();
        }
    }

    /**
     * The staging buffer, grown (once, from the arena) to hold need bytes; the caller
     * holds the lock. need is at most 42 × 8192 (the callers' checks).
     */
    MemorySegment staging(long need) {
        if (need > staging.byteSize()) {
            assert need <= MAX_STAGING;
            long size = staging.byteSize();
            while (size < need) {
                size *= 2;
            }
            staging = file.arena().allocate(Math.min(size, MAX_STAGING), 8);
        }
        return staging;
    }

    /** Whether the message's bytes go through the staging buffer (arrays and heap segments). */
    private static boolean staged(I2cMessage m) {
        return m.segment == null || !m.segment.isNative();
    }

    /**
     * I2C_RDWR of messages[0, count): one transaction, the read messages filled in place.
     * Throws HwException on the kernel's refusal, or EIO if it did fewer messages.
     */
    void transfer(String operation, I2cMessage[] messages, int count) {
        if (count < 1 || count > I2cUapi.I2C_RDWR_IOCTL_MAX_MSGS) {
            throw new IllegalArgumentException("an I2C transfer of " + count + " messages: 1.."
                    + I2cUapi.I2C_RDWR_IOCTL_MAX_MSGS + " (I2C_RDWR_IOCTL_MAX_MSGS)");
        }
        long need = 0;
        for (int i = 0; i < count; i++) {
            I2cMessage m = messages[i];
            if (m.address > 0x7f && (m.flags & I2cMessage.TEN_BIT) == 0) {
                throw new IllegalArgumentException(String.format(
                        "I2C address 0x%x is not a 7-bit one: a 10-bit address needs I2cMessage.TEN_BIT", m.address));
            }
            if (m.isRead() && m.segment != null && m.segment.isReadOnly()) {
                throw new IllegalArgumentException("an I2C read into a read-only segment");
            }
            if (staged(m)) {
                need += m.length;
            }
        }
        ReentrantLock l = file.lock();
        lockOpen(operation);
        try {
            MemorySegment st = staging(need);
            long at = 0;
            for (int i = 0; i < count; i++) {
                I2cMessage m = messages[i];
                long buf;
                if (staged(m)) {
                    if (!m.isRead()) {
                        if (m.array != null) {
                            MemorySegment.copy(m.array, m.offset, st, JAVA_BYTE, at, m.length);
                        } else {
                            MemorySegment.copy(m.segment, 0, st, at, m.length);
                        }
                    } else if ((m.flags & I2cMessage.RECV_LEN) != 0) {
                        st.set(JAVA_BYTE, at, (byte) 1); // i2c-dev: buf[0] = bytes before the data (the count)
                    }
                    buf = st.address() + at;
                    at += m.length;
                } else {
                    if ((m.flags & I2cMessage.RECV_LEN) != 0) {
                        m.segment.set(JAVA_BYTE, 0, (byte) 1);
                    }
                    buf = m.segment.address();
                }
                setMessage(i, m.address, m.flags, m.length, buf);
            }
            run(operation, count, messages);
            at = 0;
            for (int i = 0; i < count; i++) {
                I2cMessage m = messages[i];
                if (staged(m)) {
                    if (m.isRead()) {
                        if (m.array != null) {
                            MemorySegment.copy(st, JAVA_BYTE, at, m.array, m.offset, m.length);
                        } else {
                            MemorySegment.copy(st, at, m.segment, 0, m.length);
                        }
                    }
                    at += m.length;
                }
            }
        } finally {
            l.unlock();
        }
    }

    /** Fills i2c_msg number i; the caller holds the lock. */
    void setMessage(int i, int address, int flags, int length, long buffer) {
        long base = i * I2cUapi.MSG_SIZE;
        msgs.set(JAVA_SHORT, base + I2cUapi.MSG_ADDR, (short) address);
        msgs.set(JAVA_SHORT, base + I2cUapi.MSG_FLAGS, (short) flags);
        msgs.set(JAVA_SHORT, base + I2cUapi.MSG_LEN, (short) length);
        msgs.set(JAVA_LONG, base + I2cUapi.MSG_BUF, buffer);
    }

    /**
     * I2C_RDWR of the first count messages set with {@link #setMessage}; the caller holds
     * the lock. what (the messages, for the error) is read only on failure.
     */
    void run(String operation, int count, Object what) {
        rdwr.set(JAVA_INT, I2cUapi.RDWR_NMSGS, count);
        int r = file.ioctlOrErrno(operation, I2cUapi.I2C_RDWR, rdwr);
        if (r < 0) {
            throw new HwException(operation, file.path(), -r, describe(count, what));
        }
        if (r != count) {
            throw new HwException(operation, file.path(), EIO,
                    "the adapter did " + r + " of " + count + " messages: " + describe(count, what));
        }
    }

    private String describe(int count, Object what) {
        if (what instanceof I2cMessage[] ms) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < count; i++) {
                b.append(i == 0 ? "" : ", ").append(ms[i]);
            }
            return b.toString();
        }
        if (what instanceof String s) {
            return s;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < count; i++) {
            long base = i * I2cUapi.MSG_SIZE;
            int flags = msgs.get(JAVA_SHORT, base + I2cUapi.MSG_FLAGS) & 0xffff;
            b.append(i == 0 ? "" : ", ").append(String.format("%s 0x%02x flags=0x%04x len=%d",
                    (flags & I2cMessage.READ) != 0 ? "read" : "write", msgs.get(JAVA_SHORT, base) & 0xffff, flags,
                    msgs.get(JAVA_SHORT, base + I2cUapi.MSG_LEN) & 0xffff));
        }
        return b.toString();
    }

    /**
     * I2C_SMBUS to the fd's address with {@link #smbusData} (or no data); the caller holds
     * the lock and filled the union. address and command name the failure.
     */
    void smbus(String operation, int address, int readWrite, int command, int size, boolean withData) {
        // The kernel only reads the argument struct: write what differs from the last call
        // (a loop of the same transfer then writes nothing here).
        long key = (readWrite & 0xffL) | (command & 0xffL) << 8 | (size & 0xffffffffL) << 16 | (withData ? 1L << 48 : 0);
        if (key != smbusArgsKey) {
            smbusArgs.set(JAVA_BYTE, I2cUapi.SMBUS_READ_WRITE, (byte) readWrite);
            smbusArgs.set(JAVA_BYTE, I2cUapi.SMBUS_COMMAND, (byte) command);
            smbusArgs.set(JAVA_INT, I2cUapi.SMBUS_SIZE, size);
            smbusArgs.set(JAVA_LONG, I2cUapi.SMBUS_DATA_PTR, withData ? smbusData.address() : 0L);
            smbusArgsKey = key;
        }
        int r = file.ioctlOrErrno(operation, I2cUapi.I2C_SMBUS, smbusArgs);
        if (r < 0) {
            throw new HwException(operation, file.path(), -r, String.format("address 0x%02x, command 0x%02x",
                    address, command));
        }
    }

    /** read(2) or write(2) of length bytes of the staging buffer; the caller holds the lock. */
    int readWrite(String operation, boolean read, long length, int address) {
        long r = read ? file.read(operation, staging, length) : file.write(operation, staging, length);
        if (r < 0) {
            throw new HwException(operation, file.path(), (int) -r, String.format("address 0x%02x, %d bytes",
                    address, length));
        }
        return (int) r;
    }

    @Override
    public void close() {
        file.close();
    }
}
