package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One I2C target: an i2c-dev descriptor of its own, bound to one address
 * ({@code I2C_SLAVE}, or {@code I2C_SLAVE_FORCE} with {@link Option#FORCE}; 7-bit, or
 * 10-bit with {@link Option#TEN_BIT}), with SMBus packet error checking on request
 * ({@link Option#PEC}). Opened by {@link I2cBus#device} or {@link #open}.
 *
 * <p>Three ways to talk to the device:
 * <ul>
 * <li>the register helpers. <b>A register write is one message</b>:
 *     {@link #writeRegister(int, byte...)} sends {@code [reg, data...]} in ONE write
 *     message (START, address+W, reg, data..., STOP), never the register and the data as
 *     two messages, which many devices do not accept. {@link #readRegister(int, byte[])}
 *     is {@code [W: reg]} and {@code [R: n]} joined by a repeated START, in one
 *     {@code I2C_RDWR}. On an adapter without plain I2C ({@link I2cFunction#I2C} missing:
 *     SMBus-only controllers, i2c-stub), the helpers use the SMBus transfer that puts the
 *     same bytes on the wire: write byte (no data), write byte data (1 byte), I2C block
 *     write (up to 32 bytes); read byte data (1 byte), I2C block read (up to 32 bytes).
 *     Longer ones need plain I2C and fail with {@code EOPNOTSUPP} there.</li>
 * <li>the SMBus calls ({@code smbus...}): the {@code I2C_SMBUS} ioctl called directly, one
 *     transfer each, with the PEC byte when PEC is on.</li>
 * <li>{@link #transfer(I2cMessage...)} ({@code I2C_RDWR}, any messages and addresses),
 *     {@link #writeRead}, and plain {@link #read(byte[])} / {@link #write(byte[])}.</li>
 * </ul>
 *
 * <p>Memory: the kernel structs and a staging buffer are allocated once, at open, from the
 * descriptor's arena; a call allocates nothing (the {@code byte[]} results of
 * {@link #readRegister(int, int)} excepted): arrays are copied into native memory and
 * back, native {@link MemorySegment}s are handed to the kernel as they are.
 *
 * <p>Threads: any thread; calls are serialised by the device's lock. Errors: a refused
 * argument is an {@link IllegalArgumentException}; everything the kernel refuses is an
 * {@link HwException} naming the operation, the node and the errno, with the address
 * ({@code ENXIO}: no device acknowledged; {@code ETIMEDOUT}, {@code EAGAIN}: bus stuck or
 * arbitration lost; {@code EBADMSG}: PEC mismatch; {@code EOPNOTSUPP}: the adapter cannot
 * do that transfer; {@code ENODEV}: i2c-stub's answer for an absent address).
 */
public final class I2cDevice implements AutoCloseable {
    /** Options of {@link I2cDevice#open}. */
    public enum Option {
        /** The address is a 10-bit one ({@code I2C_TENBIT}; needs {@link I2cFunction#TEN_BIT_ADDRESS}). */
        TEN_BIT,
        /** Use the address even if a kernel driver owns it ({@code I2C_SLAVE_FORCE}): know why you do. */
        FORCE,
        /** SMBus packet error checking on every SMBus call ({@code I2C_PEC}; needs {@link I2cFunction#SMBUS_PEC}). */
        PEC
    }

    private static final String OPEN = "I2C open", SET_ADDRESS = "I2C set address", SET_PEC = "I2C set PEC",
            TRANSFER = "I2C transfer", WRITE_REGISTER = "I2C write register", READ_REGISTER = "I2C read register",
            WRITE_READ = "I2C write-read", READ = "I2C read", WRITE = "I2C write", FUNCS = "I2C functionality",
            QUICK = "SMBus quick", READ_BYTE = "SMBus read byte", WRITE_BYTE = "SMBus write byte",
            READ_BYTE_DATA = "SMBus read byte data", WRITE_BYTE_DATA = "SMBus write byte data",
            READ_WORD_DATA = "SMBus read word data", WRITE_WORD_DATA = "SMBus write word data",
            PROCESS_CALL = "SMBus process call", READ_BLOCK = "SMBus read block data",
            WRITE_BLOCK = "SMBus write block data", BLOCK_PROCESS_CALL = "SMBus block process call",
            READ_I2C_BLOCK = "SMBus read I2C block data", WRITE_I2C_BLOCK = "SMBus write I2C block data",
            TIMEOUT = "I2C set timeout", RETRIES = "I2C set retries";

    private final I2cFile file;
    private final int address;
    private final boolean tenBit;
    private final int messageFlags;
    private final I2cBus bus;
    private boolean pec;

    private I2cDevice(I2cFile file, int address, boolean tenBit, I2cBus bus) {
        this.file = file;
        this.address = address;
        this.tenBit = tenBit;
        this.messageFlags = tenBit ? I2cMessage.TEN_BIT : 0;
        this.bus = bus;
    }

    /**
     * Opens i2c-dev node path (e.g. {@code "/dev/i2c-1"}) for the device at address.
     * Nothing goes on the bus: an absent device shows at the first transfer.
     *
     * @throws IllegalArgumentException address out of 0..0x7f (0..0x3ff with
     *         {@link Option#TEN_BIT})
     * @throws HwException ENOENT (no such node: is i2c-dev loaded?), EACCES, ENOTTY (not
     *         an i2c-dev node), EBUSY (a kernel driver owns the address), EOPNOTSUPP (10-bit
     *         or PEC asked of an adapter without them)
     */
    public static I2cDevice open(String path, int address, Option... options) {
        return open(path, address, null, options);
    }

    static I2cDevice open(String path, int address, I2cBus bus, Option... options) {
        Objects.requireNonNull(path, "path");
        Set<Option> opts = options.length == 0 ? EnumSet.noneOf(Option.class) : EnumSet.of(options[0], options);
        boolean ten = opts.contains(Option.TEN_BIT);
        if (address < 0 || address > (ten ? 0x3ff : 0x7f)) {
            throw new IllegalArgumentException(String.format("I2C address 0x%x is out of 0..0x%x%s", address,
                    ten ? 0x3ff : 0x7f, ten ? "" : " (a 10-bit address needs Option.TEN_BIT)"));
        }
        I2cFile f = I2cFile.open(OPEN, path);
        try {
            String what = String.format("address 0x%02x", address);
            if (ten) {
                if (!f.has(I2cFunction.TEN_BIT_ADDRESS)) {
                    throw new HwException(SET_ADDRESS, path, I2cFile.EOPNOTSUPP,
                            what + ": the adapter lacks I2C_FUNC_10BIT_ADDR");
                }
                f.ioctl(SET_ADDRESS, I2cUapi.I2C_TENBIT, 1, what);
            }
            f.ioctl(SET_ADDRESS, opts.contains(Option.FORCE) ? I2cUapi.I2C_SLAVE_FORCE : I2cUapi.I2C_SLAVE, address,
                    what);
            I2cDevice d = new I2cDevice(f, address, ten, bus);
            if (opts.contains(Option.PEC)) {
                d.setPec(true);
            }
            return d;
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** The i2c-dev node. */
    public String path() {
        return file.path();
    }

    /** The device's address. */
    public int address() {
        return address;
    }

    /** Whether the address is a 10-bit one. */
    public boolean isTenBit() {
        return tenBit;
    }

    /** Whether SMBus calls carry a PEC byte. */
    public boolean pec() {
        ReentrantLock l = file.lock();
        l.lock();
        try {
            return pec;
        } finally {
            l.unlock();
        }
    }

    /** The adapter's functionality, read again ({@code I2C_FUNCS}). */
    public I2cFunctionality functionality() {
        return new I2cFunctionality(file.readFunctionality(FUNCS));
    }

    /**
     * Turns SMBus packet error checking on or off for this descriptor ({@code I2C_PEC}):
     * with it, every SMBus call carries the CRC-8 byte, and a mismatch on a read fails
     * with {@code EBADMSG}. {@code I2C_RDWR} never carries PEC (Linux semantics).
     *
     * @throws HwException EOPNOTSUPP when enabling on an adapter without
     *         {@link I2cFunction#SMBUS_PEC}
     */
    public void setPec(boolean enable) {
        ReentrantLock l = file.lock();
        file.lockOpen(SET_PEC);
        try {
            if (enable && !file.has(I2cFunction.SMBUS_PEC)) {
                throw new HwException(SET_PEC, file.path(), I2cFile.EOPNOTSUPP, "the adapter lacks I2C_FUNC_SMBUS_PEC");
            }
            file.ioctl(SET_PEC, I2cUapi.I2C_PEC, enable ? 1 : 0, String.format("address 0x%02x", address));
            pec = enable;
        } finally {
            l.unlock();
        }
    }

    /**
     * The adapter's timeout ({@code I2C_TIMEOUT}, kept by the kernel in units of 10 ms,
     * rounded up here). It is the adapter's, shared by every user of the bus.
     */
    public void setTimeoutMillis(int millis) {
        if (millis < 0 || millis > Integer.MAX_VALUE - 9) {
            throw new IllegalArgumentException("I2C timeout " + millis + " ms");
        }
        file.ioctl(TIMEOUT, I2cUapi.I2C_TIMEOUT, (millis + 9) / 10, null);
    }

    /** How often the adapter retries after a lost arbitration ({@code I2C_RETRIES}); the adapter's, shared. */
    public void setRetries(int retries) {
        if (retries < 0) {
            throw new IllegalArgumentException("I2C retries " + retries);
        }
        file.ioctl(RETRIES, I2cUapi.I2C_RETRIES, retries, null);
    }

    // ---- register helpers ----

    private static void checkByte(String what, int v) {
        if (v < 0 || v > 0xff) {
            throw new IllegalArgumentException(what + " " + v + " is out of 0..255");
        }
    }

    private String where(int reg, int length) {
        return String.format("address 0x%02x, register 0x%02x, %d bytes", address, reg, length);
    }

    /**
     * Writes data to register reg as ONE message {@code [reg, data...]} (see the class
     * comment; on an SMBus-only adapter: the SMBus transfer with the same bytes).
     *
     * @throws IllegalArgumentException reg out of 0..255, more than 8191 bytes
     */
    public void writeRegister(int reg, byte... data) {
        writeRegister(reg, data, 0, data.length);
    }

    /** {@link #writeRegister(int, byte...)} of data[offset, offset+length). */
    public void writeRegister(int reg, byte[] data, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, data.length);
        writeRegister(reg, data, null, offset, length);
    }

    /** {@link #writeRegister(int, byte...)} of the bytes of data (native or heap). */
    public void writeRegister(int reg, MemorySegment data) {
        writeRegister(reg, null, data, 0, data.byteSize());
    }

    private void writeRegister(int reg, byte[] array, MemorySegment segment, int offset, long length) {
        checkByte("I2C register", reg);
        if (length > I2cUapi.MESSAGE_LENGTH_MAX - 1) {
            throw new IllegalArgumentException("an I2C register write of " + length + " bytes: one message holds at most "
                    + (I2cUapi.MESSAGE_LENGTH_MAX - 1) + " after the register");
        }
        int n = (int) length;
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_REGISTER);
        try {
            if (!file.has(I2cFunction.I2C)) {
                smbusWriteRegister(reg, array, segment, offset, n);
                return;
            }
            MemorySegment st = file.staging(1 + n);
            st.set(JAVA_BYTE, 0, (byte) reg);
            copyIn(array, segment, offset, st, 1, n);
            file.setMessage(0, address, messageFlags, 1 + n, st.address());
            file.run(WRITE_REGISTER, 1, where(reg, n));
        } finally {
            l.unlock();
        }
    }

    private static void copyIn(byte[] array, MemorySegment segment, int offset, MemorySegment dst, long at, int n) {
        if (array != null) {
            MemorySegment.copy(array, offset, dst, JAVA_BYTE, at, n);
        } else {
            MemorySegment.copy(segment, 0, dst, at, n);
        }
    }

    private static void copyOut(MemorySegment src, long at, byte[] array, MemorySegment segment, int offset, int n) {
        if (array != null) {
            MemorySegment.copy(src, JAVA_BYTE, at, array, offset, n);
        } else {
            MemorySegment.copy(src, at, segment, 0, n);
        }
    }

    /* SMBus-only adapter: the transfers that put the same single write message on the wire. */
    private void smbusWriteRegister(int reg, byte[] array, MemorySegment segment, int offset, int n) {
        MemorySegment d = file.smbusData;
        if (n == 0 && file.has(I2cFunction.SMBUS_WRITE_BYTE)) {
            file.smbus(WRITE_REGISTER, address, I2cUapi.I2C_SMBUS_WRITE, reg, I2cUapi.I2C_SMBUS_BYTE, false);
        } else if (n == 1 && file.has(I2cFunction.SMBUS_WRITE_BYTE_DATA)) {
            copyIn(array, segment, offset, d, 0, 1);
            file.smbus(WRITE_REGISTER, address, I2cUapi.I2C_SMBUS_WRITE, reg, I2cUapi.I2C_SMBUS_BYTE_DATA, true);
        } else if (n >= 1 && n <= I2cUapi.I2C_SMBUS_BLOCK_MAX && file.has(I2cFunction.SMBUS_WRITE_I2C_BLOCK)) {
            d.set(JAVA_BYTE, 0, (byte) n);
            copyIn(array, segment, offset, d, 1, n);
            file.smbus(WRITE_REGISTER, address, I2cUapi.I2C_SMBUS_WRITE, reg, I2cUapi.I2C_SMBUS_I2C_BLOCK_DATA, true);
        } else {
            throw new HwException(WRITE_REGISTER, file.path(), I2cFile.EOPNOTSUPP, where(reg, n)
                    + ": the adapter has no plain I2C and no SMBus transfer of that length");
        }
    }

    /**
     * Reads into.length bytes from register reg: {@code [W: reg]}, repeated START,
     * {@code [R: n]}, in one {@code I2C_RDWR} (on an SMBus-only adapter: read byte data
     * or I2C block read).
     */
    public void readRegister(int reg, byte[] into) {
        readRegister(reg, into, 0, into.length);
    }

    /** {@link #readRegister(int, byte[])} into into[offset, offset+length). */
    public void readRegister(int reg, byte[] into, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, into.length);
        readRegister(reg, into, null, offset, length);
    }

    /** {@link #readRegister(int, byte[])} into the bytes of into (native: filled by the kernel in place). */
    public void readRegister(int reg, MemorySegment into) {
        readRegister(reg, null, into, 0, into.byteSize());
    }

    /** {@link #readRegister(int, byte[])} into a new array of length bytes (this allocates the result). */
    public byte[] readRegister(int reg, int length) {
        byte[] b = new byte[length];
        readRegister(reg, b);
        return b;
    }

    private void readRegister(int reg, byte[] array, MemorySegment segment, int offset, long length) {
        checkByte("I2C register", reg);
        if (length < 1 || length > I2cUapi.MESSAGE_LENGTH_MAX) {
            throw new IllegalArgumentException("an I2C register read of " + length + " bytes: 1.."
                    + I2cUapi.MESSAGE_LENGTH_MAX);
        }
        if (segment != null && segment.isReadOnly()) {
            throw new IllegalArgumentException("an I2C read into a read-only segment");
        }
        int n = (int) length;
        ReentrantLock l = file.lock();
        file.lockOpen(READ_REGISTER);
        try {
            if (!file.has(I2cFunction.I2C)) {
                smbusReadRegister(reg, array, segment, offset, n);
                return;
            }
            MemorySegment st = file.staging(1 + n);
            st.set(JAVA_BYTE, 0, (byte) reg);
            boolean direct = segment != null && segment.isNative();
            file.setMessage(0, address, messageFlags, 1, st.address());
            file.setMessage(1, address, messageFlags | I2cMessage.READ, n,
                    direct ? segment.address() : st.address() + 1);
            file.run(READ_REGISTER, 2, where(reg, n));
            if (!direct) {
                copyOut(st, 1, array, segment, offset, n);
            }
        } finally {
            l.unlock();
        }
    }

    private void smbusReadRegister(int reg, byte[] array, MemorySegment segment, int offset, int n) {
        MemorySegment d = file.smbusData;
        if (n == 1 && file.has(I2cFunction.SMBUS_READ_BYTE_DATA)) {
            file.smbus(READ_REGISTER, address, I2cUapi.I2C_SMBUS_READ, reg, I2cUapi.I2C_SMBUS_BYTE_DATA, true);
            copyOut(d, 0, array, segment, offset, 1);
        } else if (n <= I2cUapi.I2C_SMBUS_BLOCK_MAX && file.has(I2cFunction.SMBUS_READ_I2C_BLOCK)) {
            d.set(JAVA_BYTE, 0, (byte) n);
            file.smbus(READ_REGISTER, address, I2cUapi.I2C_SMBUS_READ, reg, I2cUapi.I2C_SMBUS_I2C_BLOCK_DATA, true);
            int got = d.get(JAVA_BYTE, 0) & 0xff;
            if (got != n) {
                throw new HwException(READ_REGISTER, file.path(), I2cFile.EIO, where(reg, n) + ": got " + got);
            }
            copyOut(d, 1, array, segment, offset, n);
        } else {
            throw new HwException(READ_REGISTER, file.path(), I2cFile.EOPNOTSUPP, where(reg, n)
                    + ": the adapter has no plain I2C and no SMBus transfer of that length");
        }
    }

    /**
     * Writes write, then reads into.length bytes into into, joined by a repeated START
     * (one {@code I2C_RDWR} of two messages): a 16-bit register address, a command and
     * its answer. Either may be empty to do only the other.
     */
    public void writeRead(byte[] write, byte[] into) {
        writeRead(write, null, into, null);
    }

    /** {@link #writeRead(byte[], byte[])} with segments (native ones are handed to the kernel as they are). */
    public void writeRead(MemorySegment write, MemorySegment into) {
        writeRead(null, write, null, into);
    }

    private void writeRead(byte[] wa, MemorySegment ws, byte[] ra, MemorySegment rs) {
        long wn = wa != null ? wa.length : ws.byteSize();
        long rn = ra != null ? ra.length : rs.byteSize();
        if (wn > I2cUapi.MESSAGE_LENGTH_MAX || rn > I2cUapi.MESSAGE_LENGTH_MAX || wn + rn == 0) {
            throw new IllegalArgumentException("an I2C write-read of " + wn + " + " + rn + " bytes: each 0.."
                    + I2cUapi.MESSAGE_LENGTH_MAX + ", not both 0");
        }
        if (rs != null && rs.isReadOnly()) {
            throw new IllegalArgumentException("an I2C read into a read-only segment");
        }
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_READ);
        try {
            MemorySegment st = file.staging(wn + rn);
            int k = 0;
            if (wn > 0) {
                long buf;
                if (ws != null && ws.isNative()) {
                    buf = ws.address();
                } else {
                    copyIn(wa, ws, 0, st, 0, (int) wn);
                    buf = st.address();
                }
                file.setMessage(k++, address, messageFlags, (int) wn, buf);
            }
            boolean direct = rs != null && rs.isNative();
            if (rn > 0) {
                file.setMessage(k++, address, messageFlags | I2cMessage.READ, (int) rn,
                        direct ? rs.address() : st.address() + wn);
            }
            file.run(WRITE_READ, k, String.format("address 0x%02x, write %d, read %d bytes", address, wn, rn));
            if (rn > 0 && !direct) {
                copyOut(st, wn, ra, rs, 0, (int) rn);
            }
        } finally {
            l.unlock();
        }
    }

    /** Plain read(2) of into.length bytes: one read message. Returns the bytes read. */
    public int read(byte[] into) {
        if (into.length < 1 || into.length > I2cUapi.MESSAGE_LENGTH_MAX) {
            throw new IllegalArgumentException("an I2C read of " + into.length + " bytes: 1.."
                    + I2cUapi.MESSAGE_LENGTH_MAX);
        }
        ReentrantLock l = file.lock();
        file.lockOpen(READ);
        try {
            int n = file.readWrite(READ, true, into.length, address);
            MemorySegment.copy(file.staging(0), JAVA_BYTE, 0, into, 0, n);
            return n;
        } finally {
            l.unlock();
        }
    }

    /** Plain write(2) of data: one write message. Returns the bytes written. */
    public int write(byte... data) {
        if (data.length < 1 || data.length > I2cUapi.MESSAGE_LENGTH_MAX) {
            throw new IllegalArgumentException("an I2C write of " + data.length + " bytes: 1.."
                    + I2cUapi.MESSAGE_LENGTH_MAX);
        }
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE);
        try {
            MemorySegment.copy(data, 0, file.staging(0), JAVA_BYTE, 0, data.length);
            return file.readWrite(WRITE, false, data.length, address);
        } finally {
            l.unlock();
        }
    }

    /**
     * {@code I2C_RDWR}: the messages as one transaction, to any addresses (not only this
     * device's). See {@link I2cBus#transfer(I2cMessage...)}.
     */
    public void transfer(I2cMessage... messages) {
        file.transfer(TRANSFER, messages, messages.length);
    }

    // ---- SMBus ----

    private void smbus(String op, int readWrite, int command, int size, boolean withData) {
        file.smbus(op, address, readWrite, command, size, withData);
    }

    /** SMBus quick command: the address and the R/W bit (read if true), no data. */
    public void smbusQuick(boolean read) {
        ReentrantLock l = file.lock();
        file.lockOpen(QUICK);
        try {
            smbus(QUICK, read ? I2cUapi.I2C_SMBUS_READ : I2cUapi.I2C_SMBUS_WRITE, 0, I2cUapi.I2C_SMBUS_QUICK, false);
        } finally {
            l.unlock();
        }
    }

    /** SMBus receive byte: 0..255. */
    public int smbusReadByte() {
        ReentrantLock l = file.lock();
        file.lockOpen(READ_BYTE);
        try {
            smbus(READ_BYTE, I2cUapi.I2C_SMBUS_READ, 0, I2cUapi.I2C_SMBUS_BYTE, true);
            return file.smbusData.get(JAVA_BYTE, 0) & 0xff;
        } finally {
            l.unlock();
        }
    }

    /** SMBus send byte (value 0..255). */
    public void smbusWriteByte(int value) {
        checkByte("SMBus byte", value);
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_BYTE);
        try {
            smbus(WRITE_BYTE, I2cUapi.I2C_SMBUS_WRITE, value, I2cUapi.I2C_SMBUS_BYTE, false);
        } finally {
            l.unlock();
        }
    }

    /** SMBus read byte data: the byte at command (0..255), 0..255. */
    public int smbusReadByteData(int command) {
        checkByte("SMBus command", command);
        ReentrantLock l = file.lock();
        file.lockOpen(READ_BYTE_DATA);
        try {
            smbus(READ_BYTE_DATA, I2cUapi.I2C_SMBUS_READ, command, I2cUapi.I2C_SMBUS_BYTE_DATA, true);
            return file.smbusData.get(JAVA_BYTE, 0) & 0xff;
        } finally {
            l.unlock();
        }
    }

    /** SMBus write byte data. */
    public void smbusWriteByteData(int command, int value) {
        checkByte("SMBus command", command);
        checkByte("SMBus byte", value);
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_BYTE_DATA);
        try {
            file.smbusData.set(JAVA_BYTE, 0, (byte) value);
            smbus(WRITE_BYTE_DATA, I2cUapi.I2C_SMBUS_WRITE, command, I2cUapi.I2C_SMBUS_BYTE_DATA, true);
        } finally {
            l.unlock();
        }
    }

    private static void checkWord(int v) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException("SMBus word " + v + " is out of 0..65535");
        }
    }

    /** SMBus read word data: 0..65535, low byte first on the wire (SMBus order). */
    public int smbusReadWordData(int command) {
        checkByte("SMBus command", command);
        ReentrantLock l = file.lock();
        file.lockOpen(READ_WORD_DATA);
        try {
            smbus(READ_WORD_DATA, I2cUapi.I2C_SMBUS_READ, command, I2cUapi.I2C_SMBUS_WORD_DATA, true);
            return file.smbusData.get(JAVA_SHORT, 0) & 0xffff;
        } finally {
            l.unlock();
        }
    }

    /** SMBus write word data (0..65535), low byte first on the wire. */
    public void smbusWriteWordData(int command, int value) {
        checkByte("SMBus command", command);
        checkWord(value);
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_WORD_DATA);
        try {
            file.smbusData.set(JAVA_SHORT, 0, (short) value);
            smbus(WRITE_WORD_DATA, I2cUapi.I2C_SMBUS_WRITE, command, I2cUapi.I2C_SMBUS_WORD_DATA, true);
        } finally {
            l.unlock();
        }
    }

    /** SMBus process call: writes a word, reads a word back (0..65535). */
    public int smbusProcessCall(int command, int value) {
        checkByte("SMBus command", command);
        checkWord(value);
        ReentrantLock l = file.lock();
        file.lockOpen(PROCESS_CALL);
        try {
            file.smbusData.set(JAVA_SHORT, 0, (short) value);
            smbus(PROCESS_CALL, I2cUapi.I2C_SMBUS_WRITE, command, I2cUapi.I2C_SMBUS_PROC_CALL, true);
            return file.smbusData.get(JAVA_SHORT, 0) & 0xffff;
        } finally {
            l.unlock();
        }
    }

    /* The count of a block the device sent: 1..32, else EPROTO (as the kernel's own emulation says). */
    private int blockCount(String op, int command) {
        int n = file.smbusData.get(JAVA_BYTE, 0) & 0xff;
        if (n == 0 || n > I2cUapi.I2C_SMBUS_BLOCK_MAX) {
            throw new HwException(op, file.path(), I2cFile.EPROTO, String.format(
                    "address 0x%02x, command 0x%02x: block count %d", address, command, n));
        }
        return n;
    }

    private static void checkBlock(String what, int length) {
        if (length < 1 || length > I2cUapi.I2C_SMBUS_BLOCK_MAX) {
            throw new IllegalArgumentException(what + " of " + length + " bytes: 1.." + I2cUapi.I2C_SMBUS_BLOCK_MAX);
        }
    }

    private static void checkRoom(byte[] into) {
        if (into.length < I2cUapi.I2C_SMBUS_BLOCK_MAX) {
            throw new IllegalArgumentException("an SMBus block read needs room for " + I2cUapi.I2C_SMBUS_BLOCK_MAX
                    + " bytes, not " + into.length);
        }
    }

    /**
     * SMBus block read: the device sends a count (1..32), then that many bytes, copied to
     * into (which has room for 32). Returns the count.
     */
    public int smbusReadBlockData(int command, byte[] into) {
        checkByte("SMBus command", command);
        checkRoom(into);
        ReentrantLock l = file.lock();
        file.lockOpen(READ_BLOCK);
        try {
            smbus(READ_BLOCK, I2cUapi.I2C_SMBUS_READ, command, I2cUapi.I2C_SMBUS_BLOCK_DATA, true);
            int n = blockCount(READ_BLOCK, command);
            MemorySegment.copy(file.smbusData, JAVA_BYTE, 1, into, 0, n);
            return n;
        } finally {
            l.unlock();
        }
    }

    /** SMBus block write of 1..32 bytes (a count byte precedes them on the wire). */
    public void smbusWriteBlockData(int command, byte... data) {
        smbusWriteBlockData(command, data, 0, data.length);
    }

    /** {@link #smbusWriteBlockData(int, byte...)} of data[offset, offset+length). */
    public void smbusWriteBlockData(int command, byte[] data, int offset, int length) {
        checkByte("SMBus command", command);
        Objects.checkFromIndexSize(offset, length, data.length);
        checkBlock("an SMBus block write", length);
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_BLOCK);
        try {
            file.smbusData.set(JAVA_BYTE, 0, (byte) length);
            MemorySegment.copy(data, offset, file.smbusData, JAVA_BYTE, 1, length);
            smbus(WRITE_BLOCK, I2cUapi.I2C_SMBUS_WRITE, command, I2cUapi.I2C_SMBUS_BLOCK_DATA, true);
        } finally {
            l.unlock();
        }
    }

    /**
     * SMBus block process call: writes 1..32 bytes, reads a block back into into (room
     * for 32). Returns the count read.
     */
    public int smbusBlockProcessCall(int command, byte[] write, byte[] into) {
        checkByte("SMBus command", command);
        checkBlock("an SMBus block process call", write.length);
        checkRoom(into);
        ReentrantLock l = file.lock();
        file.lockOpen(BLOCK_PROCESS_CALL);
        try {
            file.smbusData.set(JAVA_BYTE, 0, (byte) write.length);
            MemorySegment.copy(write, 0, file.smbusData, JAVA_BYTE, 1, write.length);
            smbus(BLOCK_PROCESS_CALL, I2cUapi.I2C_SMBUS_WRITE, command, I2cUapi.I2C_SMBUS_BLOCK_PROC_CALL, true);
            int n = blockCount(BLOCK_PROCESS_CALL, command);
            MemorySegment.copy(file.smbusData, JAVA_BYTE, 1, into, 0, n);
            return n;
        } finally {
            l.unlock();
        }
    }

    /** I2C block read (no count byte): into.length (1..32) bytes from command. Returns the bytes read. */
    public int smbusReadI2cBlockData(int command, byte[] into) {
        return smbusReadI2cBlockData(command, into, 0, into.length);
    }

    /** {@link #smbusReadI2cBlockData(int, byte[])} of length bytes into into[offset, offset+length). */
    public int smbusReadI2cBlockData(int command, byte[] into, int offset, int length) {
        checkByte("SMBus command", command);
        Objects.checkFromIndexSize(offset, length, into.length);
        checkBlock("an I2C block read", length);
        ReentrantLock l = file.lock();
        file.lockOpen(READ_I2C_BLOCK);
        try {
            file.smbusData.set(JAVA_BYTE, 0, (byte) length);
            smbus(READ_I2C_BLOCK, I2cUapi.I2C_SMBUS_READ, command, I2cUapi.I2C_SMBUS_I2C_BLOCK_DATA, true);
            int n = file.smbusData.get(JAVA_BYTE, 0) & 0xff;
            if (n > length) {
                throw new HwException(READ_I2C_BLOCK, file.path(), I2cFile.EPROTO, String.format(
                        "address 0x%02x, command 0x%02x: %d bytes for %d asked", address, command, n, length));
            }
            MemorySegment.copy(file.smbusData, JAVA_BYTE, 1, into, offset, n);
            return n;
        } finally {
            l.unlock();
        }
    }

    /** I2C block write (no count byte) of 1..32 bytes starting at command. */
    public void smbusWriteI2cBlockData(int command, byte... data) {
        smbusWriteI2cBlockData(command, data, 0, data.length);
    }

    /** {@link #smbusWriteI2cBlockData(int, byte...)} of data[offset, offset+length). */
    public void smbusWriteI2cBlockData(int command, byte[] data, int offset, int length) {
        checkByte("SMBus command", command);
        Objects.checkFromIndexSize(offset, length, data.length);
        checkBlock("an I2C block write", length);
        ReentrantLock l = file.lock();
        file.lockOpen(WRITE_I2C_BLOCK);
        try {
            file.smbusData.set(JAVA_BYTE, 0, (byte) length);
            MemorySegment.copy(data, offset, file.smbusData, JAVA_BYTE, 1, length);
            smbus(WRITE_I2C_BLOCK, I2cUapi.I2C_SMBUS_WRITE, command, I2cUapi.I2C_SMBUS_I2C_BLOCK_DATA, true);
        } finally {
            l.unlock();
        }
    }

    /** Closes the descriptor and frees its native memory; idempotent. Later calls fail with EBADF. */
    @Override
    public void close() {
        file.close();
        if (bus != null) {
            bus.forget(this);
        }
    }

    /** E.g. {@code "I2cDevice[/dev/i2c-1 0x48]"}. */
    @Override
    public String toString() {
        return String.format("I2cDevice[%s 0x%02x%s]", file.path(), address, tenBit ? " 10-bit" : "");
    }
}
