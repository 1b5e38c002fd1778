package io.parambus;

import static io.parambus.SegmentLayout.A;
import static io.parambus.SegmentLayout.COPY_VALUE;
import static io.parambus.SegmentLayout.H_STATE;
import static io.parambus.SegmentLayout.SLOT_COPY0;
import static io.parambus.SegmentLayout.T_ENUM;
import static io.parambus.SegmentLayout.T_BYTES;
import static io.parambus.SegmentLayout.T_STRING;
import static io.parambus.SegmentLayout.T_DOUBLE;
import static io.parambus.SegmentLayout.T_FLOAT;
import static io.parambus.SegmentLayout.T_UINT64;
import static io.parambus.SegmentLayout.T_UINT32;
import static io.parambus.SegmentLayout.T_UINT16;
import static io.parambus.SegmentLayout.T_UINT8;
import static io.parambus.SegmentLayout.T_INT64;
import static io.parambus.SegmentLayout.T_INT32;
import static io.parambus.SegmentLayout.T_INT16;
import static io.parambus.SegmentLayout.T_INT8;
import static io.parambus.SegmentLayout.T_BOOL;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.parambus.internal.Clock;
import io.parambus.internal.Native;
import io.parambus.internal.Native.Errno;
import io.parambus.internal.Proc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An opened parambus instance: its value segment mapped in place as a
 * {@link MemorySegment} and read and written with the lock-free protocol of
 * docs/segment-format.md, through {@link VarHandle} access modes exactly as its §4.7
 * names them. Nothing of the table is copied into the heap but its metadata (names,
 * types, limits, resolved once at {@link #open}); every value is read from the mapping
 * when asked for.
 *
 * <pre>{@code
 * try (ParamTable t = ParamTable.open("psu1")) {
 *     int volts = t.index("measured_voltage");
 *     double v = t.getDouble(volts);           // a few loads, no lock, no allocation
 * }
 * }</pre>
 *
 * <h2>Reading</h2>
 * The scalar getters ({@link #getDouble(int)} …) follow the read protocol (§4.1): the
 * version with {@code getAcquire}, the value's word with {@code getOpaque},
 * {@link VarHandle#acquireFence()}, the version again with {@code getOpaque}; if a write
 * completed meanwhile they try again, and after every 8th failed attempt post a reader's
 * turn (§4.5), so that no writer can starve them. They allocate nothing. A reader never sees a torn value, never waits for a writer
 * and is never blocked by one that died.
 *
 * <h2>Writing</h2>
 * A table opened with {@link Access#WRITE} or {@link Access#PROVIDER} writes through the
 * lock path of §4.2–§4.3: <b>a Java writer never takes a bias</b>; it locks the
 * parameter's word with a compare-and-swap ({@code 0 → me}, let go to 0;
 * {@code SHARED → me}, let go to SHARED), revokes other threads' biases (with the
 * global {@code membarrier(2)} barrier), takes over from writers that died, sleeps on
 * the word's futex (bit 61) behind a live holder and gives up with {@code EBUSY} after
 * one second of a stopped one, and holds off for a reader's turn. <b>Writes run on
 * platform threads only</b>: a claim names one OS thread (§4.8), and a virtual thread
 * can change carriers between two statements, so a write on a virtual thread is refused
 * with {@code EPERM}. Hand writes to a platform thread ({@code Thread.ofPlatform()}, an
 * executor of platform threads). Reads and waits run on any thread.
 *
 * <h2>Timestamps</h2>
 * A write's timestamp is CLOCK_REALTIME in ns, read with {@code clock_gettime()} through
 * an FFM downcall (a native buffer per writing thread, so nothing is allocated), unless
 * the caller gives one ({@link WriteBatch#timestamp(long)}).
 *
 * <h2>Errors</h2>
 * Every error is a {@link ParambusException} whose {@link ParambusException#errno()} is
 * the C library's equivalent ({@code ENOENT}, {@code EPERM}, {@code EPROTO},
 * {@code EINVAL}, {@code ERANGE}, {@code EMSGSIZE}, {@code EACCES}, {@code ESTALE},
 * {@code EBUSY}) and whose one-line message names the operation, the instance and
 * parameter, and the problem.
 *
 * <h2>Threads</h2>
 * A table may be used by any number of threads at once, reads and writes of the same
 * parameter included, except {@link #close()}, which must come after every other use
 * (an access after it throws {@link IllegalStateException}; a write interrupted that way
 * may leave its parameter claimed until its thread ends, §4.3). {@link Watch} and
 * {@link WriteBatch} objects are used by one thread at a time.
 */
public final class ParamTable implements AutoCloseable {
    /** How a table is opened: C's {@code PBUS_OPEN_READ}, {@code _WRITE}, {@code _PROVIDER}. */
    public enum Access {
        /** Read values and wait for changes; the segment is mapped read-only. */
        READ,
        /** Also write the parameters that are not read-only; the segment is mapped read-write. */
        WRITE,
        /** Also write read-only parameters (the instrument's own measurements and identity). */
        PROVIDER
    }

    static final VarHandle LONG = JAVA_LONG.varHandle();
    static final VarHandle INT = JAVA_INT.varHandle();
    static final VarHandle BYTE = JAVA_BYTE.varHandle();

    // The lock word (§4.3).
    static final long BIASED = 1L << 62, SHARED = 2L << 62, WAITERS = 1L << 61, STATE_MASK = 3L << 62;
    // The reader's turn (§4.5).
    static final int READ_TRIES_BEFORE_TURN = 8;
    static final long READER_TURN_NS = 200_000, TURN_SLACK_NS = 10_000;


    private final String instance;
    final Access access;
    private final Arena arena;
    final MemorySegment seg;
    private final MemorySegment readOnlyView;
    final MemorySegment wake;
    private final boolean wakeIsStandIn;
    private final SegmentLayout layout;
    private final int ownerUid;
    private volatile boolean closed;

    // Per parameter, from the validated descriptors: what a read or write needs, in
    // primitive arrays (one load each on the hot path).
    final int count;
    /**
     * Per parameter, the slot's offset (below 2^56) with the type code in the top byte:
     * what a scalar getter needs, in one load (its array bounds check is the index check).
     */
    private final long[] slotAndType;
    private static final long SLOT_MASK = (1L << 56) - 1;
    final long[] slot;
    final int[] stride;
    final int[] copies;
    final int[] valueSize;
    final int[] type;
    final long[] valueMask;
    private final boolean[] scalar;
    final int[] flags;
    final long[] min, max;
    final int[][] enumValues;
    final long turnsOffset;
    final long auxOffset;
    final Param[] params;
    private final List<Param> paramList;
    /** The checks and stored encodings of writes (ValueChecks.java). */
    final ValueChecks checks;
    /** The write protocol (SlotWriter.java). */
    final SlotWriter writer;
    private final Map<String, Integer> byName;

    private ParamTable(String instance, Access access, Arena arena, MemorySegment seg, MemorySegment wake,
            boolean wakeIsStandIn, SegmentLayout l, int ownerUid) {
        this.instance = instance;
        this.access = access;
        this.arena = arena;
        // A read-only mapping is a read-only segment too: a write to it would be refused by
        // the FFM API rather than fault (none is ever made: every write checks the access).
        this.seg = access == Access.READ ? seg.asReadOnly() : seg;
        this.readOnlyView = seg.asReadOnly();
        this.wake = wake;
        this.wakeIsStandIn = wakeIsStandIn;
        this.layout = l;
        this.ownerUid = ownerUid;
        this.count = l.paramCount;
        this.slot = l.slotOffsets;
        this.stride = l.copyStrides;
        this.copies = l.copyCounts;
        this.valueSize = l.valueSizes;
        this.type = l.types;
        this.flags = l.flags;
        this.min = l.mins;
        this.max = l.maxs;
        this.turnsOffset = SegmentLayout.turnsOffset(count);
        this.auxOffset = l.auxOffset;
        this.valueMask = new long[count];
        this.slotAndType = new long[count];
        this.scalar = new boolean[count];
        this.params = new Param[count];
        this.enumValues = new int[count][];
        this.byName = new HashMap<>(count * 2);
        for (int i = 0; i < count; i++) {
            ParamType t = ParamType.ofCode(type[i]);
            scalar[i] = Sample.isScalar(t);
            valueMask[i] = valueSize[i] >= 8 ? -1L : (1L << (8 * valueSize[i])) - 1;
            slotAndType[i] = slot[i] | (long) type[i] << 56;
            String enumName = null;
            List<Enumerator> enumerators = List.of();
            if (t.element() == ParamType.ENUM) {
                int e = (int) l.enumIndexes[i];
                enumName = l.enumNames[e];
                List<Enumerator> list = new ArrayList<>(l.enumSize[e]);
                for (int k = 0; k < l.enumSize[e]; k++) {
                    int at = l.enumFirst[e] + k;
                    list.add(new Enumerator(l.enumeratorValues[at], l.enumeratorLabels[at]));
                }
                enumerators = Collections.unmodifiableList(list);
                enumValues[i] = Arrays.copyOfRange(l.enumeratorValues, l.enumFirst[e], l.enumFirst[e] + l.enumSize[e]);
            }
            params[i] = new Param(i, l.names[i], l.units[i], l.descriptions[i], l.groups[i], t,
                    UpdateClass.ofCode(l.updateClasses[i]), flags[i], valueSize[i], l.elementSizes[i], l.gids[i],
                    min[i], max[i], l.steps[i], l.defaults[i], enumName, enumerators);
            byName.putIfAbsent(l.names[i], i);
        }
        this.paramList = List.of(params);
        this.checks = new ValueChecks(this);
        this.writer = new SlotWriter(this);
    }

    // --- Opening ---------------------------------------------------------------------

    /**
     * Open instance {@code instance} for reading (C's {@code PBUS_OPEN_READ}).
     *
     * @see #open(String, Access)
     */
    public static ParamTable open(String instance) {
        return open(instance, Access.READ);
    }

    /**
     * Open instance {@code instance} ({@code "psu1"}: letters, digits, {@code _ - .}, 1–48
     * bytes, not starting with {@code .} or {@code -}): map {@code /dev/shm/pbus.NAME}
     * read-only (or read-write for {@link Access#WRITE} and {@link Access#PROVIDER}), after
     * checking who owns it (docs/security.md §3: root, this process's effective user, or a
     * user named in the environment variable {@code PBUS_OWNER}), validate it completely
     * (docs/segment-format.md §7) and attach its wake segment after checking that its owner
     * made it (§3). The caller owns the table and closes it.
     *
     * @throws ParambusException {@code EINVAL} a malformed name; {@code ENOENT} no such
     *     instance (is pbusd running?); {@code EACCES} the segment's permissions refuse the
     *     access asked for; {@code EPERM} the segment belongs to an untrusted user or others
     *     may write it; {@code EPROTO} a symbolic link, not a regular file, not a parambus
     *     segment of format 2 or not this instance's ({@link InvalidSegmentException} names
     *     the check of §7), or a wake segment its owner did not make; {@code ENOSYS} not
     *     Linux on a known 64-bit little-endian architecture
     */
    @SuppressWarnings("restricted") // reinterpret: the mapping's size and its munmap
    public static ParamTable open(String instance, Access access) {
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(access, "access");
        String what = "open " + instance;
        String unsupported = Native.unsupportedReason();
        if (unsupported != null) {
            throw new ParambusException("ENOSYS", what + ": ENOSYS: " + unsupported);
        }
        if (!validInstanceName(instance)) {
            throw new ParambusException("EINVAL", what + ": EINVAL: not an instance name (letters, digits, '_', '-',"
                    + " '.'; 1 to 48 bytes; not starting with '.' or '-')");
        }
        String path = "/dev/shm/pbus." + instance;
        boolean writable = access != Access.READ;
        int fd;
        try {
            fd = Native.open(path, (writable ? Native.O_RDWR : Native.O_RDONLY) | Native.O_CLOEXEC
                    | Native.O_NONBLOCK | Native.ARCH.oNoFollow());
        } catch (Errno e) {
            throw switch (e.code) {
                case Native.ELOOP -> new ParambusException("EPROTO", what + ": EPROTO: " + path
                        + " is a symbolic link, which is never believed (docs/security.md)");
                case Native.ENOENT -> new ParambusException("ENOENT", what + ": ENOENT: no such instance (" + path
                        + " does not exist: is pbusd running?)");
                case Native.EACCES -> new ParambusException("EACCES", what + ": EACCES: the permissions of " + path
                        + " refuse " + (writable ? "writing" : "reading"));
                default -> new ParambusException(e.errnoName(), what + ": " + e.errnoName() + ": cannot open " + path);
            };
        }
        Arena arena = Arena.ofShared();
        try {
            MemorySegment seg;
            int uid;
            try {
                Native.FileStatus st = Native.fstat(fd);
                if ((st.mode() & Native.S_IFMT) != Native.S_IFREG) {
                    throw new ParambusException("EPROTO", what + ": EPROTO: " + path + " is not a regular file");
                }
                uid = st.uid();
                if (!ownerTrusted(uid)) {
                    throw new ParambusException("EPERM", what + ": EPERM: " + path + " belongs to uid "
                            + Integer.toUnsignedString(uid) + ", whom this process does not trust to own instances"
                            + " (root, itself, or a user named in PBUS_OWNER)");
                }
                if ((st.mode() & Native.S_IWOTH) != 0) {
                    throw new ParambusException("EPERM", what + ": EPERM: " + path + " is writable by others");
                }
                if (st.size() < SegmentLayout.HEADER_SIZE) {
                    throw new InvalidSegmentException("size", what + ": EPROTO: not a valid parambus segment: check"
                            + " size failed: the file has " + st.size() + " bytes, fewer than a 256-byte header");
                }
                long size = st.size();
                long addr = Native.mmapShared(size, Native.PROT_READ | (writable ? Native.PROT_WRITE : 0), fd);
                seg = MemorySegment.ofAddress(addr).reinterpret(size, arena, s -> Native.munmap(addr, size));
            } catch (Errno e) {
                throw new ParambusException(e.errnoName(), what + ": " + e.errnoName() + ": " + e.getMessage());
            } finally {
                Native.close(fd);
            }
            SegmentLayout l = SegmentLayout.validate(seg, seg.byteSize(), instance, what);
            MemorySegment wake = attachWake(what, arena, seg, l, uid);
            boolean standIn = wake == null;
            if (standIn) {
                // An orphan (§3): nobody is left to wake or be woken; a private zero-filled
                // stand-in keeps reads, writes and waits working.
                wake = arena.allocate(l.wakeSize, 8);
            }
            return new ParamTable(instance, access, arena, seg, wake, standIn, l, uid);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** Whether {@code name} is a valid instance name (docs/segment-format.md §1). */
    static boolean validInstanceName(String name) {
        int n = name.length();
        if (n == 0 || n > 48 || name.charAt(0) == '.' || name.charAt(0) == '-') {
            return false;
        }
        for (int k = 0; k < n; k++) {
            char c = name.charAt(k);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
                    || c == '-' || c == '.')) {
                return false;
            }
        }
        return true;
    }

    /** Whether uid may own an instance (docs/security.md §3). */
    static boolean ownerTrusted(int uid) {
        if (uid == 0 || uid == Native.geteuid()) {
            return true;
        }
        String list = System.getenv("PBUS_OWNER");
        if (list == null) {
            return false;
        }
        for (String name : list.split(",", -1)) {
            if (name.isEmpty()) {
                continue;
            }
            if (name.charAt(0) >= '0' && name.charAt(0) <= '9') {
                try {
                    if (Long.parseLong(name) == Integer.toUnsignedLong(uid)) {
                        return true;
                    }
                } catch (NumberFormatException e) {
                    // Not a number: names nobody.
                }
            } else if (Native.uidOfUser(name) == Integer.toUnsignedLong(uid)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Attach the wake segment and check that the owner made it (§3); null if the instance
     * is an orphan whose wake segment is gone or not its own.
     */
    @SuppressWarnings("restricted") // reinterpret: the wake segment's size and its shmdt
    private static MemorySegment attachWake(String what, Arena arena, MemorySegment seg, SegmentLayout l,
            int ownerUid) {
        long wakeId = Integer.toUnsignedLong(l.wakeId);
        if (wakeId > Integer.MAX_VALUE) {
            throw new ParambusException("EPROTO", what + ": EPROTO: wake_id " + wakeId + " is above 2^31 - 1");
        }
        int attachError = 0;
        try {
            long addr = Native.shmat((int) wakeId);
            boolean ours = false;
            try {
                // Attached, the id names this segment until we detach: its status is the truth.
                Native.ShmStatus st = Native.shmStat((int) wakeId);
                ours = st.creatorUid() == ownerUid && st.creatorPid() == l.ownerPid
                        && Long.compareUnsigned(st.size(), l.wakeSize) >= 0;
            } catch (Errno e) {
                ours = false;
            }
            if (ours) {
                return MemorySegment.ofAddress(addr).reinterpret(l.wakeSize, arena, s -> Native.shmdt(addr));
            }
            Native.shmdt(addr);
        } catch (Errno e) {
            attachError = e.code;
        }
        // Gone, or somebody else's now: possible only once the owner is dead.
        int state = (int) INT.getAcquire(seg, H_STATE);
        if (Proc.processAlive(Integer.toUnsignedLong(l.ownerPid), Integer.toUnsignedLong(l.ownerStart))
                && Integer.compareUnsigned(state, 1) <= 0) {
            String errno = attachError == Native.EACCES || attachError == Native.ENOMEM ? Native.name(attachError)
                    : "EPROTO";
            throw new ParambusException(errno, what + ": " + errno + ": the wake segment " + wakeId
                    + " is not one the instance's owner (pid " + Integer.toUnsignedString(l.ownerPid) + ") made"
                    + (attachError != 0 ? " (shmat: " + Native.name(attachError) + ")" : ""));
        }
        return null;
    }

    // --- The table -------------------------------------------------------------------

    /** The instance's name. */
    public String instance() {
        return instance;
    }

    /** The access the table was opened with. */
    public Access access() {
        return access;
    }

    /** The Franca interface's fully qualified name, e.g. {@code "com.example.psu.PowerSupply"}. */
    public String interfaceName() {
        return layout.interfaceName;
    }

    /** The interface's major version. */
    public int interfaceMajor() {
        return layout.interfaceMajor;
    }

    /** The interface's minor version. */
    public int interfaceMinor() {
        return layout.interfaceMinor;
    }

    /** The schema hash (FNV-1a-64 of the compiled schema), as stored in the header. */
    public long schemaHash() {
        return layout.schemaHash;
    }

    /** The number of parameters. */
    public int paramCount() {
        return count;
    }

    /** The segment's random id, chosen by its owner at creation. */
    public long instanceId() {
        return layout.instanceId;
    }

    /** The owner's (pbusd's) process id as the header records it. */
    public int ownerPid() {
        return layout.ownerPid;
    }

    /** The uid that owns the value segment's file (the instance's owner). */
    public int ownerUid() {
        return ownerUid;
    }

    /** CLOCK_REALTIME of the segment's creation, ns since the epoch. */
    public long createdNs() {
        return layout.createdNs;
    }

    /** Whether the wake segment is a private stand-in (an orphan's, §3) rather than the owner's. */
    public boolean wakeIsStandIn() {
        return wakeIsStandIn;
    }

    /**
     * The read-only view of the whole mapped value segment (for tools and tests that look
     * at the format itself; the table's methods are the way to read values).
     */
    public MemorySegment segment() {
        return readOnlyView;
    }

    /**
     * Where the instance stands (docs/segment-format.md §6): {@code state} loaded with
     * acquire; live (or creating) and the owner alive: {@link TableState#LIVE}, its owner
     * dead: {@link TableState#ORPHANED}; 2: {@link TableState#CLOSED}; 3 and anything
     * above: {@link TableState#REPLACED}. Reads {@code /proc} to see whether the owner
     * lives (a few system calls): call it now and then, not per read.
     */
    public TableState state() {
        int s = (int) INT.getAcquire(seg, H_STATE);
        if (Integer.compareUnsigned(s, 1) <= 0) {
            return Proc.processAlive(Integer.toUnsignedLong(layout.ownerPid), Integer.toUnsignedLong(layout.ownerStart))
                    ? TableState.LIVE : TableState.ORPHANED;
        }
        return s == 2 ? TableState.CLOSED : TableState.REPLACED;
    }

    /** Whether the instance was closed or replaced (the header's state above 1). */
    boolean gone() {
        return Integer.compareUnsigned((int) INT.getAcquire(seg, H_STATE), 1) > 0;
    }

    /**
     * Check, once after opening, that the instance was built from the schema a generated
     * class was compiled against (§7.2): its interface name, schema hash and parameter
     * count. On a mismatch the table is closed (as the C bindings' generated
     * {@code *_open()} closes it) and {@link SchemaMismatchException} names what differs.
     */
    public void checkSchema(String interfaceName, long schemaHash, int paramCount) {
        List<String> diffs = new ArrayList<>();
        if (!layout.interfaceName.equals(interfaceName)) {
            diffs.add("interface " + layout.interfaceName + ", compiled against " + interfaceName);
        }
        if (layout.schemaHash != schemaHash) {
            diffs.add(String.format("schema hash 0x%016x, compiled against 0x%016x", layout.schemaHash, schemaHash));
        }
        if (count != paramCount) {
            diffs.add(count + " parameters, compiled against " + paramCount);
        }
        if (!diffs.isEmpty()) {
            close();
            throw new SchemaMismatchException("check schema of " + instance + ": EPROTO: the instance was built from"
                    + " another schema: " + String.join("; ", diffs));
        }
    }

    /**
     * Unmap the segments. Idempotent. Every other use of the table, its watches and
     * batches must have ended (a later access throws {@link IllegalStateException}).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            arena.close();
        }
    }

    // --- Parameters ------------------------------------------------------------------

    ParambusException noSuchIndex(String op, int index) {
        return new ParambusException("ENOENT", op + " " + instance + ": ENOENT: no parameter " + index + " (it has "
                + count + ")");
    }

    void checkIndex(String op, int index) {
        if (index < 0 || index >= count) {
            throw noSuchIndex(op, index);
        }
    }

    String obj(int index) {
        return instance + "/" + params[index].name();
    }

    /**
     * The parameter at {@code index}.
     *
     * @throws ParambusException {@code ENOENT} if there is none
     */
    public Param param(int index) {
        checkIndex("param", index);
        return params[index];
    }

    /**
     * The parameter named {@code name}.
     *
     * @throws ParambusException {@code ENOENT} naming the parameter if there is none
     */
    public Param param(String name) {
        return params[index(name)];
    }

    /**
     * The index of the parameter named {@code name}.
     *
     * @throws ParambusException {@code ENOENT} naming the parameter if there is none
     */
    public int index(String name) {
        Integer i = byName.get(name);
        if (i == null) {
            throw new ParambusException("ENOENT", "find " + instance + "/" + name + ": ENOENT: no parameter named "
                    + name);
        }
        return i;
    }

    /** Every parameter in index order (an unmodifiable list). */
    public List<Param> params() {
        return paramList;
    }

    // --- Reading: the protocol (§4.1) -------------------------------------------------

    ParambusException typeError(String op, int i, String wanted) {
        return new ParambusException("EINVAL", op + " " + obj(i) + ": EINVAL: the parameter is "
                + ParamType.ofCode(type[i]).spelling() + ", " + op + " takes " + wanted);
    }

    /**
     * A scalar's stored word (the 8 bytes at the copy's value, as stored: the value in its
     * low bytes) from the slot at {@code s}, parameter {@code i}, by the read protocol
     * (§4.1): the first attempt is the common case; a write that completed meanwhile makes
     * it try again, and every 8th failed attempt posts a reader's turn (§4.5). The attempts
     * share one loop, so that a retry runs the very accesses the first attempt ran (and
     * links nothing new: no allocation, ever). Allocation-free.
     */
    private long readWord(long s, int i) {
        final MemorySegment seg = this.seg;
        long turn = 0;
        for (int attempt = 1;; attempt++) {
            long seq = (long) LONG.getAcquire(seg, s);
            long word = (long) LONG.getOpaque(seg, s + SLOT_COPY0 + COPY_VALUE + (seq & 1) * 24);
            VarHandle.acquireFence();
            if ((long) LONG.getOpaque(seg, s) == seq) {
                if (turn != 0) {
                    giveTurnBack(i, turn);
                }
                return word;
            }
            if (attempt % READ_TRIES_BEFORE_TURN == 0) {
                turn = takeTurn(i, turn);
            }
        }
    }

    /**
     * The slot offset and type of parameter {@code index} for a scalar getter: one array
     * load, whose bounds check is the index check.
     */
    private long scalarSlot(String op, int index) {
        try {
            return slotAndType[index];
        } catch (ArrayIndexOutOfBoundsException e) {
            throw noSuchIndex(op, index);
        }
    }

    /** Post (or renew) a reader's turn unless another reader's runs (§4.5); this read's deadline. */
    long takeTurn(int i, long turn) {
        long off = turnsOffset + 8L * i;
        long now = Clock.monotonicNs();
        long cur = (long) LONG.getOpaque(wake, off);
        if (Long.compareUnsigned(now, cur) < 0 && Long.compareUnsigned(cur, now + READER_TURN_NS) <= 0
                && cur != turn) {
            return turn;
        }
        long deadline = now + READER_TURN_NS;
        return (long) LONG.compareAndExchange(wake, off, cur, deadline) == cur ? deadline : turn;
    }

    /** Give back the turn (not 0) this read posted, and wake the writers that hold off for it. */
    void giveTurnBack(int i, long turn) {
        long off = turnsOffset + 8L * i;
        if ((long) LONG.compareAndExchangeRelease(wake, off, turn, 0L) == turn) {
            Native.futexWakeAll(wake.address() + off);
        }
    }

    /**
     * Read parameter {@code index} with its timestamp, status, version and length into
     * {@code into} (the general reader of §4.1, for every type). Allocation-free once the
     * sample's buffer holds the parameter's value size.
     *
     * @throws ParambusException {@code ENOENT} if there is no such parameter
     */
    public void read(int index, Sample into) {
        checkIndex("read", index);
        final MemorySegment seg = this.seg;
        final long s = slot[index];
        final long mask = copies[index] - 1;
        final long n2 = copies[index] - 2;
        final int vs = valueSize[index];
        final int st = stride[index];
        final boolean isScalar = scalar[index];
        byte[] buf = into.buffer(vs);
        long turn = 0;
        for (int attempt = 1;; attempt++) {
            long seq = (long) LONG.getAcquire(seg, s);
            long c = s + SLOT_COPY0 + (seq & mask) * st;
            long ts = (long) LONG.getOpaque(seg, c);
            int status = Byte.toUnsignedInt((byte) BYTE.getOpaque(seg, c + 8));
            int len = (int) INT.getOpaque(seg, c + 12);
            if (isScalar || Integer.compareUnsigned(len, vs) > 0) {
                len = vs;
            }
            for (int w = 0; w < len; w += 8) {
                Sample.putWord(buf, w, (long) LONG.getOpaque(seg, c + COPY_VALUE + w));
            }
            VarHandle.acquireFence();
            long seq2 = (long) LONG.getOpaque(seg, s);
            if (Long.compareUnsigned(seq2 - seq, n2) <= 0) {
                if (turn != 0) {
                    giveTurnBack(index, turn);
                }
                into.index = index;
                into.type = params[index].type();
                into.timestampNs = ts;
                into.statusCode = status;
                into.length = len;
                into.version = seq;
                long bits = 0;
                for (int k = Math.min(len, 8) - 1; k >= 0; k--) {
                    bits = bits << 8 | Byte.toUnsignedLong(buf[k]);
                }
                into.bits = isScalar ? bits & valueMask[index] : bits;
                return;
            }
            if (attempt % READ_TRIES_BEFORE_TURN == 0) {
                turn = takeTurn(index, turn);
            }
        }
    }

    /** {@link #read(int, Sample)} by name. */
    public void read(String name, Sample into) {
        read(index(name), into);
    }

    /**
     * Read several parameters, each into its sample ({@code into[k]} gets
     * {@code indexes[k]}). Each value is consistent on its own; together they are not one
     * snapshot.
     *
     * @throws ParambusException {@code ENOENT} for an index with no parameter (samples before it are filled)
     * @throws IllegalArgumentException if the arrays' lengths differ
     */
    public void readMany(int[] indexes, Sample[] into) {
        if (indexes.length != into.length) {
            throw new IllegalArgumentException("readMany: " + indexes.length + " indexes, " + into.length + " samples");
        }
        for (int k = 0; k < indexes.length; k++) {
            read(indexes[k], into[k]);
        }
    }

    /**
     * The version of parameter {@code index} (the slot's {@code seq}, acquire), without
     * reading its value: it grows by one with each write (unsigned).
     */
    public long version(int index) {
        checkIndex("version", index);
        return (long) LONG.getAcquire(seg, slot[index]);
    }

    /**
     * The newest version of a persistent parameter that pbusd has on disk (its aux record's
     * {@code saved_seq}, acquire; §5.2).
     */
    public long savedVersion(int index) {
        checkIndex("savedVersion", index);
        return (long) LONG.getAcquire(seg, auxOffset + SegmentLayout.AUX_SIZE * index);
    }

    /** A non-scalar's value as a fresh sample (the array getters' common step). */
    private Sample readValue(String op, int index, int... types) {
        checkIndex(op, index);
        int t = type[index];
        boolean ok = false;
        for (int want : types) {
            ok |= t == want;
        }
        if (!ok) {
            StringBuilder b = new StringBuilder();
            for (int want : types) {
                b.append(b.length() == 0 ? "" : " or ").append(ParamType.ofCode(want).spelling());
            }
            throw typeError(op, index, b.toString());
        }
        Sample s = new Sample();
        read(index, s);
        return s;
    }

    // --- Scalar getters --------------------------------------------------------------

    /**
     * A bool (any non-zero stored byte reads as true, §2.8). Allocation-free.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public boolean getBoolean(int index) {
        long p = scalarSlot("getBoolean", index);
        if ((int) (p >>> 56) != T_BOOL) {
            throw typeError("getBoolean", index, "bool");
        }
        return (readWord(p & SLOT_MASK, index) & 0xFF) != 0;
    }

    /**
     * An int8, int16, int32, uint8, uint16 or enum as an {@code int} (signed ones
     * sign-extended; an enum's number even if no enumerator has it, §2.8). Allocation-free.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public int getInt(int index) {
        long p = scalarSlot("getInt", index);
        long s = p & SLOT_MASK;
        switch ((int) (p >>> 56)) {
            case T_INT8:
                return (byte) readWord(s, index);
            case T_INT16:
                return (short) readWord(s, index);
            case T_INT32:
            case T_ENUM:
                return (int) readWord(s, index);
            case T_UINT8:
                return (int) readWord(s, index) & 0xFF;
            case T_UINT16:
                return (int) readWord(s, index) & 0xFFFF;
            default:
                throw typeError("getInt", index, "int8, int16, int32, uint8, uint16 or enum");
        }
    }

    /**
     * Any integer type or enum as a {@code long}: signed ones sign-extended, unsigned ones
     * zero-extended, a uint64 as its 64 bits (unsigned: use {@link Long#toUnsignedString}).
     * Allocation-free.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public long getLong(int index) {
        long p = scalarSlot("getLong", index);
        long s = p & SLOT_MASK;
        switch ((int) (p >>> 56)) {
            case T_INT8:
                return (byte) readWord(s, index);
            case T_INT16:
                return (short) readWord(s, index);
            case T_INT32:
            case T_ENUM:
                return (int) readWord(s, index);
            case T_UINT8:
                return readWord(s, index) & 0xFF;
            case T_UINT16:
                return readWord(s, index) & 0xFFFF;
            case T_UINT32:
                return readWord(s, index) & 0xFFFFFFFFL;
            case T_INT64:
            case T_UINT64:
                return readWord(s, index);
            default:
                throw typeError("getLong", index, "an integer type or enum");
        }
    }

    /**
     * A float. Allocation-free.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public float getFloat(int index) {
        long p = scalarSlot("getFloat", index);
        if ((int) (p >>> 56) != T_FLOAT) {
            throw typeError("getFloat", index, "float");
        }
        return Float.intBitsToFloat((int) readWord(p & SLOT_MASK, index));
    }

    /**
     * A double (bits as stored: NaN payloads and negative zero kept). Allocation-free: an
     * array load and three {@link VarHandle} accesses to the mapping.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public double getDouble(int index) {
        long p = scalarSlot("getDouble", index);
        if ((int) (p >>> 56) != T_DOUBLE) {
            throw typeError("getDouble", index, "double");
        }
        return Double.longBitsToDouble(readWord(p & SLOT_MASK, index));
    }

    /**
     * A string (invalid UTF-8 replaced by U+FFFD, §2.8). Allocates the string.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public String getString(int index) {
        return readValue("getString", index, T_STRING).stringValue();
    }

    /**
     * A bytes parameter's value (a new array of its length).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public byte[] getBytes(int index) {
        Sample s = readValue("getBytes", index, T_BYTES);
        return Arrays.copyOf(s.bytes, s.length);
    }

    // --- Array getters ---------------------------------------------------------------


    /**
     * A bool[] (each non-zero byte true; whole elements only, §2.8).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public boolean[] getBooleanArray(int index) {
        Sample s = readValue("getBooleanArray", index, A | T_BOOL);
        boolean[] r = new boolean[s.length];
        for (int k = 0; k < r.length; k++) {
            r[k] = s.bytes[k] != 0;
        }
        return r;
    }

    /**
     * An int8[] or uint8[] (a uint8 as its bits).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public byte[] getByteArray(int index) {
        Sample s = readValue("getByteArray", index, A | T_INT8, A | T_UINT8);
        return Arrays.copyOf(s.bytes, s.length);
    }

    /**
     * An int16[] or uint16[] (a uint16 as its bits); whole elements only (§2.8).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public short[] getShortArray(int index) {
        Sample s = readValue("getShortArray", index, A | T_INT16, A | T_UINT16);
        short[] r = new short[s.length / 2];
        ByteBuffer.wrap(s.bytes, 0, r.length * 2).order(java.nio.ByteOrder.LITTLE_ENDIAN).asShortBuffer().get(r);
        return r;
    }

    /**
     * An int32[] or uint32[] (a uint32 as its bits); whole elements only (§2.8).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public int[] getIntArray(int index) {
        Sample s = readValue("getIntArray", index, A | T_INT32, A | T_UINT32);
        int[] r = new int[s.length / 4];
        ByteBuffer.wrap(s.bytes, 0, r.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(r);
        return r;
    }

    /**
     * An int64[] or uint64[] (a uint64 as its bits); whole elements only (§2.8).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public long[] getLongArray(int index) {
        Sample s = readValue("getLongArray", index, A | T_INT64, A | T_UINT64);
        long[] r = new long[s.length / 8];
        ByteBuffer.wrap(s.bytes, 0, r.length * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(r);
        return r;
    }

    /**
     * A float[]; whole elements only (§2.8).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public float[] getFloatArray(int index) {
        Sample s = readValue("getFloatArray", index, A | T_FLOAT);
        float[] r = new float[s.length / 4];
        ByteBuffer.wrap(s.bytes, 0, r.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(r);
        return r;
    }

    /**
     * A double[]; whole elements only (§2.8).
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another type
     */
    public double[] getDoubleArray(int index) {
        Sample s = readValue("getDoubleArray", index, A | T_DOUBLE);
        double[] r = new double[s.length / 8];
        ByteBuffer.wrap(s.bytes, 0, r.length * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(r);
        return r;
    }

    // --- Getters by name ---------------------------------------------------------------

    /** {@link #getBoolean(int)} of the parameter named {@code name} (ENOENT if none). */
    public boolean getBoolean(String name) {
        return getBoolean(index(name));
    }

    /** {@link #getInt(int)} of the parameter named {@code name} (ENOENT if none). */
    public int getInt(String name) {
        return getInt(index(name));
    }

    /** {@link #getLong(int)} of the parameter named {@code name} (ENOENT if none). */
    public long getLong(String name) {
        return getLong(index(name));
    }

    /** {@link #getFloat(int)} of the parameter named {@code name} (ENOENT if none). */
    public float getFloat(String name) {
        return getFloat(index(name));
    }

    /** {@link #getDouble(int)} of the parameter named {@code name} (ENOENT if none). */
    public double getDouble(String name) {
        return getDouble(index(name));
    }

    /** {@link #getString(int)} of the parameter named {@code name} (ENOENT if none). */
    public String getString(String name) {
        return getString(index(name));
    }

    /** {@link #getBytes(int)} of the parameter named {@code name} (ENOENT if none). */
    public byte[] getBytes(String name) {
        return getBytes(index(name));
    }

    /** {@link #getDoubleArray(int)} of the parameter named {@code name} (ENOENT if none). */
    public double[] getDoubleArray(String name) {
        return getDoubleArray(index(name));
    }

    // --- Setters ----------------------------------------------------------------------

    /**
     * Write a bool, status ok, now.
     *
     * @throws ParambusException {@code ENOENT} no such parameter; {@code EINVAL} another
     *     type; {@code EACCES} read-only or a table opened for reading; {@code EPERM} on a
     *     virtual thread; {@code ESTALE} the instance closed or was replaced; {@code EBUSY}
     *     a writer that stopped holds the parameter (after one second). Nothing is written
     *     on any error.
     */
    public void setBoolean(int index, boolean value) {
        writer.writeScalar("setBoolean", index, checks.encodeBoolean("setBoolean", index, value));
    }

    /**
     * Write an int8, int16, int32, uint8, uint16 or enum (by its number), status ok, now.
     *
     * @throws ParambusException as {@link #setBoolean(int, boolean)}, and {@code ERANGE} if
     *     the value does not fit the type, is outside the limits or is no enumerator
     */
    public void setInt(int index, int value) {
        writer.writeScalar("setInt", index, checks.encodeInt("setInt", index, value));
    }

    /**
     * Write any integer type or enum, status ok, now (a uint64 takes the value's 64 bits
     * as unsigned).
     *
     * @throws ParambusException as {@link #setInt(int, int)}
     */
    public void setLong(int index, long value) {
        writer.writeScalar("setLong", index, checks.encodeLong("setLong", index, value));
    }

    /**
     * Write a float, status ok, now.
     *
     * @throws ParambusException as {@link #setBoolean(int, boolean)}, and {@code ERANGE}
     *     outside the limits (NaN is outside any limit)
     */
    public void setFloat(int index, float value) {
        writer.writeScalar("setFloat", index, checks.encodeFloat("setFloat", index, value));
    }

    /**
     * Write a double, status ok, now (its bits as given: NaN payloads, negative zero).
     *
     * @throws ParambusException as {@link #setFloat(int, float)}
     */
    public void setDouble(int index, double value) {
        writer.writeScalar("setDouble", index, checks.encodeDouble("setDouble", index, value));
    }

    /**
     * Write a string (UTF-8, no NUL), status ok, now.
     *
     * @throws ParambusException as {@link #setBoolean(int, boolean)}, {@code EMSGSIZE} longer
     *     than the parameter holds, {@code EINVAL} a NUL or an unpaired surrogate
     */
    public void setString(int index, String value) {
        byte[] v = checks.encodeString("setString", index, value);
        writer.writeStored("setString", index, v, v.length);
    }

    /**
     * Write a bytes parameter, status ok, now.
     *
     * @throws ParambusException as {@link #setBoolean(int, boolean)}, {@code EMSGSIZE} longer
     *     than the parameter holds
     */
    public void setBytes(int index, byte[] value) {
        byte[] v = checks.encodeBytes("setBytes", index, value);
        writer.writeStored("setBytes", index, v, v.length);
    }

    /**
     * Write a bool[], status ok, now.
     *
     * @throws ParambusException as {@link #setBytes(int, byte[])}
     */
    public void setBooleanArray(int index, boolean[] value) {
        byte[] v = checks.encodeBooleanArray("setBooleanArray", index, value);
        writer.writeStored("setBooleanArray", index, v, v.length);
    }

    /**
     * Write an int8[] or uint8[] (elements as their bits).
     *
     * @throws ParambusException as {@link #setBytes(int, byte[])}, {@code ERANGE} an element
     *     outside the limits
     */
    public void setByteArray(int index, byte[] value) {
        byte[] v = checks.encodeByteArray("setByteArray", index, value);
        writer.writeStored("setByteArray", index, v, v.length);
    }

    /**
     * Write an int16[] or uint16[].
     *
     * @throws ParambusException as {@link #setByteArray(int, byte[])}
     */
    public void setShortArray(int index, short[] value) {
        byte[] v = checks.encodeShortArray("setShortArray", index, value);
        writer.writeStored("setShortArray", index, v, v.length);
    }

    /**
     * Write an int32[] or uint32[].
     *
     * @throws ParambusException as {@link #setByteArray(int, byte[])}
     */
    public void setIntArray(int index, int[] value) {
        byte[] v = checks.encodeIntArray("setIntArray", index, value);
        writer.writeStored("setIntArray", index, v, v.length);
    }

    /**
     * Write an int64[] or uint64[].
     *
     * @throws ParambusException as {@link #setByteArray(int, byte[])}
     */
    public void setLongArray(int index, long[] value) {
        byte[] v = checks.encodeLongArray("setLongArray", index, value);
        writer.writeStored("setLongArray", index, v, v.length);
    }

    /**
     * Write a float[].
     *
     * @throws ParambusException as {@link #setByteArray(int, byte[])}
     */
    public void setFloatArray(int index, float[] value) {
        byte[] v = checks.encodeFloatArray("setFloatArray", index, value);
        writer.writeStored("setFloatArray", index, v, v.length);
    }

    /**
     * Write a double[].
     *
     * @throws ParambusException as {@link #setByteArray(int, byte[])}
     */
    public void setDoubleArray(int index, double[] value) {
        byte[] v = checks.encodeDoubleArray("setDoubleArray", index, value);
        writer.writeStored("setDoubleArray", index, v, v.length);
    }

    // --- Setters by name ---------------------------------------------------------------

    /** {@link #setBoolean(int, boolean)} of the parameter named {@code name} (ENOENT if none). */
    public void setBoolean(String name, boolean value) {
        setBoolean(index(name), value);
    }

    /** {@link #setInt(int, int)} of the parameter named {@code name} (ENOENT if none). */
    public void setInt(String name, int value) {
        setInt(index(name), value);
    }

    /** {@link #setLong(int, long)} of the parameter named {@code name} (ENOENT if none). */
    public void setLong(String name, long value) {
        setLong(index(name), value);
    }

    /** {@link #setFloat(int, float)} of the parameter named {@code name} (ENOENT if none). */
    public void setFloat(String name, float value) {
        setFloat(index(name), value);
    }

    /** {@link #setDouble(int, double)} of the parameter named {@code name} (ENOENT if none). */
    public void setDouble(String name, double value) {
        setDouble(index(name), value);
    }

    /** {@link #setString(int, String)} of the parameter named {@code name} (ENOENT if none). */
    public void setString(String name, String value) {
        setString(index(name), value);
    }

    /** {@link #setBytes(int, byte[])} of the parameter named {@code name} (ENOENT if none). */
    public void setBytes(String name, byte[] value) {
        setBytes(index(name), value);
    }

    /** {@link #setDoubleArray(int, double[])} of the parameter named {@code name} (ENOENT if none). */
    public void setDoubleArray(String name, double[] value) {
        setDoubleArray(index(name), value);
    }

    // --- Writing (the protocol: SlotWriter.java) -----------------------------------------

    ParambusException stale(String op, int i) {
        return new ParambusException("ESTALE", op + " " + obj(i) + ": ESTALE: the instance was "
                + (state() == TableState.CLOSED ? "closed" : "replaced") + " (open it again)");
    }

    /** Bump the wake segment's notify word and wake everyone asleep on it. */
    void notifyWaiters() {
        writer.notifyWaiters();
    }

    // --- Batches (§4.2: all or nothing) --------------------------------------------------

    /**
     * A new, empty batch of writes to this table: every write is checked when it is added,
     * and {@link WriteBatch#commit()} writes all of them or none.
     */
    public WriteBatch batch() {
        return new WriteBatch(this);
    }

    // --- Waiting (§5.1, §5.2) ------------------------------------------------------------

    private static final long SAVE_CHECK_NS = 1_000_000_000L;

    /**
     * Wait until pbusd has saved version {@code version} of persistent parameter
     * {@code index} (or a later one) in its state file (docs/segment-format.md §5.2): after
     * a write of a persistent parameter, {@code awaitSaved(i, version(i), timeout)} says
     * when it is on disk. Sleeps on the header's {@code save_count} futex in slices of a
     * second, to notice an owner that died. On a virtual thread the sleep is handed to a
     * platform thread, as {@link Watch#await} does.
     *
     * @return true once saved, false if {@code timeout} passed first
     * @throws ParambusException {@code EINVAL} the parameter is not persistent or the
     *     timeout is negative; {@code ENOENT} no such parameter; {@code ESTALE} the instance
     *     closed or was replaced; {@code ESRCH} its owner (pbusd) died; {@code EINTR} the
     *     thread was interrupted
     */
    public boolean awaitSaved(int index, long version, java.time.Duration timeout) {
        checkIndex("awaitSaved", index);
        Objects.requireNonNull(timeout, "timeout");
        if (!params[index].isPersistent()) {
            throw new ParambusException("EINVAL", "awaitSaved " + obj(index) + ": EINVAL: the parameter is not"
                    + " persistent (pbusd does not save it)");
        }
        if (timeout.isNegative()) {
            throw new ParambusException("EINVAL", "awaitSaved " + obj(index) + ": EINVAL: negative timeout");
        }
        long deadline = Clock.deadlineAfter(timeout);
        if (!Thread.currentThread().isVirtual()) {
            return awaitSavedBlocking(index, version, deadline, null);
        }
        java.util.concurrent.atomic.AtomicBoolean abandon = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.Future<Boolean> f = Watch.PoolHolder.POOL.submit(
                () -> awaitSavedBlocking(index, version, deadline, abandon));
        try {
            return f.get();
        } catch (InterruptedException e) {
            abandon.set(true);
            Thread.currentThread().interrupt();
            throw new ParambusException("EINTR", "awaitSaved " + obj(index) + ": EINTR: the thread was interrupted");
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    private boolean awaitSavedBlocking(int index, long version, long deadline,
            java.util.concurrent.atomic.AtomicBoolean abandon) {
        long saveCount = seg.address() + SegmentLayout.H_SAVE_COUNT;
        while (true) {
            int n = (int) INT.getAcquire(seg, SegmentLayout.H_SAVE_COUNT);
            if (Long.compareUnsigned(savedVersion(index), version) >= 0) {
                return true;
            }
            if (gone()) {
                throw stale("awaitSaved", index);
            }
            if (!Proc.processAlive(Integer.toUnsignedLong(layout.ownerPid), Integer.toUnsignedLong(layout.ownerStart))) {
                throw new ParambusException("ESRCH", "awaitSaved " + obj(index) + ": ESRCH: the instance's owner (pid "
                        + Integer.toUnsignedString(layout.ownerPid) + ") is gone: nothing will save the value");
            }
            if ((abandon != null && abandon.get()) || Thread.currentThread().isInterrupted()) {
                throw new ParambusException("EINTR", "awaitSaved " + obj(index) + ": EINTR: the thread was"
                        + " interrupted");
            }
            long now = Clock.monotonicNs();
            int r = Native.futexWait(saveCount, n, Math.min(deadline, now + SAVE_CHECK_NS));
            if (r == Native.ETIMEDOUT && Clock.monotonicNs() >= deadline) {
                return Long.compareUnsigned(savedVersion(index), version) >= 0;
            }
        }
    }

    /**
     * A watch over the parameters {@code indexes}: it remembers their versions now, and
     * {@link Watch#await} sleeps until one of them changes.
     *
     * @throws ParambusException {@code ENOENT} for an index with no parameter
     */
    public Watch watch(int... indexes) {
        int[] copy = indexes.clone();
        for (int i : copy) {
            checkIndex("watch", i);
        }
        return new Watch(this, copy, false);
    }

    /** A watch over every parameter (registered as one "any" waiter, §5.1). */
    public Watch watchAll() {
        int[] all = new int[count];
        for (int i = 0; i < count; i++) {
            all[i] = i;
        }
        return new Watch(this, all, true);
    }

    @Override
    public String toString() {
        return "ParamTable[" + instance + ", " + layout.interfaceName + " " + layout.interfaceMajor + "."
                + layout.interfaceMinor + ", " + count + " parameters, " + access + "]";
    }
}
