package io.parambus;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * The metadata of a value segment, checked as docs/segment-format.md §7 says, in its
 * order, and copied out of the mapping once: every offset and size the table uses
 * afterwards is one that passed the checks (a trusted writer that later scribbles on
 * the descriptors cannot move a reader outside its mapping, and the FFM API would
 * refuse such an access anyway).
 *
 * <p>Thread-safety: immutable once {@link #validate} returns.
 */
final class SegmentLayout {
    // The header (§2.1).
    static final long HEADER_SIZE = 256;
    static final long H_MAGIC = 0, H_VERSION = 8, H_HEADER_SIZE = 12, H_SEGMENT_SIZE = 16, H_SCHEMA_HASH = 24,
            H_INSTANCE_ID = 32, H_PARAM_COUNT = 40, H_ENUM_COUNT = 44, H_DESCRIPTOR_SIZE = 48, H_STATE = 52,
            H_DESCRIPTORS = 56, H_ENUMS = 64, H_ENUMERATORS = 72, H_STRINGS = 80, H_STRINGS_SIZE = 88,
            H_SLOTS = 96, H_SLOTS_SIZE = 104, H_AUX = 112, H_OWNER_PID = 120, H_OWNER_START = 124,
            H_CREATED = 128, H_INTERFACE = 136, H_INTERFACE_LENGTH = 140, H_MAJOR = 144, H_MINOR = 148,
            H_INSTANCE = 152, H_SAVE_COUNT = 216, H_WAKE_ID = 220, H_WAKE_SIZE = 224, H_REVOCATIONS = 232;
    static final int FORMAT_VERSION = 2, DESCRIPTOR_SIZE = 128, PARAM_MAX = 65535, VALUE_SIZE_MAX = 65536;
    static final long NO_ENUM = 0xFFFFFFFFL;
    // Flags (§2.2).
    static final int F_READONLY = 1, F_PERSISTENT = 2, F_NOREAD = 4, F_NOSUBSCRIPTIONS = 8, F_HAS_MIN = 16,
            F_HAS_MAX = 32, F_HAS_STEP = 64, F_HAS_DEFAULT = 128;
    // Type codes (§2.6); A: the array bit.
    static final int T_BOOL = 1, T_INT8 = 2, T_INT16 = 3, T_INT32 = 4, T_INT64 = 5, T_UINT8 = 6, T_UINT16 = 7,
            T_UINT32 = 8, T_UINT64 = 9, T_FLOAT = 10, T_DOUBLE = 11, T_STRING = 12, T_BYTES = 13, T_ENUM = 14,
            A = 0x80;
    // The wake segment (§3).
    static final long W_NOTIFY = 64, W_ANY_WAITERS = 68, W_PARAM_WAITERS = 72, W_WAITERS = 128;
    static final long WAKE_SLACK_MAX = 65536;
    // Slots and copies (§2.5).
    static final long SLOT_SEQ = 0, SLOT_LOCK = 8, SLOT_COPY0 = 16;
    static final long COPY_TIMESTAMP = 0, COPY_STATUS = 8, COPY_LENGTH = 12, COPY_VALUE = 16;
    static final long AUX_SAVED_SEQ = 0, AUX_WRITING = 8, AUX_SIZE = 16;

    /** Where the reader's turns start in a wake segment of {@code count} parameters: T. */
    static long turnsOffset(long count) {
        return (W_WAITERS + 4 * count + 7) / 8 * 8;
    }

    /** The bytes of a wake segment that are used: W = T + 8 × count. */
    static long wakeNeed(long count) {
        return turnsOffset(count) + 8 * count;
    }

    // Header fields.
    long segmentSize, schemaHash, instanceId, descriptorsOffset, enumsOffset, enumeratorsOffset, stringsOffset,
            stringsSize, slotsOffset, slotsSize, auxOffset, createdNs, wakeSize;
    int paramCount, enumCount, ownerPid, ownerStart, interfaceMajor, interfaceMinor, wakeId;
    String interfaceName, instance;
    // Enums.
    String[] enumNames;
    int[] enumFirst, enumSize;
    int[] enumeratorValues;
    String[] enumeratorLabels;
    // Descriptors, by index.
    String[] names, units, descriptions, groups;
    int[] types, updateClasses, flags, valueSizes, elementSizes, copyStrides, copyCounts, gids;
    long[] enumIndexes, slotOffsets, mins, maxs, steps;
    byte[][] defaults;

    private final MemorySegment seg;
    private final String what;

    private SegmentLayout(MemorySegment seg, String what) {
        this.seg = seg;
        this.what = what;
    }

    private int u32(long off) {
        return seg.get(JAVA_INT_UNALIGNED, off);
    }

    private long u32L(long off) {
        return Integer.toUnsignedLong(seg.get(JAVA_INT_UNALIGNED, off));
    }

    private long u64(long off) {
        return seg.get(JAVA_LONG_UNALIGNED, off);
    }

    private InvalidSegmentException refuse(String check, String detail) {
        return new InvalidSegmentException(check, what + ": EPROTO: not a valid parambus segment: check " + check
                + " failed: " + detail);
    }

    /** A text of the segment as a message shows it: on one line (control characters as '?'). */
    private static String printable(String text) {
        return text.replaceAll("\\p{Cntrl}", "?");
    }

    /** {@code offset ≤ total} and {@code length ≤ total − offset}, unsigned, without overflow. */
    static boolean inside(long offset, long length, long total) {
        return Long.compareUnsigned(offset, total) <= 0 && Long.compareUnsigned(length, total - offset) <= 0;
    }

    /** A valid string of the pool (§7): inside with its NUL, NUL-terminated, no NUL inside. */
    private String poolString(long offset, long length, String whose) {
        if (!inside(offset, length + 1, stringsSize)) {
            throw refuse("string", whose + " (pool offset " + offset + ", length " + length
                    + ") lies outside the string pool of " + stringsSize + " bytes");
        }
        long base = stringsOffset + offset;
        if (seg.get(JAVA_BYTE, base + length) != 0) {
            throw refuse("string", whose + " (pool offset " + offset + ") is not followed by a NUL");
        }
        byte[] bytes = new byte[(int) length];
        MemorySegment.copy(seg, JAVA_BYTE, base, bytes, 0, (int) length);
        for (byte b : bytes) {
            if (b == 0) {
                throw refuse("string", whose + " (pool offset " + offset + ") holds a NUL byte");
            }
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Check the mapped segment {@code seg} of file {@code fileSize} bytes (already known to
     * be at least 256) as the segment of instance {@code instance}; {@code what} names it
     * in messages ("open psu1"). Throws {@link InvalidSegmentException} naming the first
     * failed check.
     */
    static SegmentLayout validate(MemorySegment seg, long fileSize, String instance, String what) {
        SegmentLayout l = new SegmentLayout(seg, what);
        try {
            l.check(fileSize, instance);
        } catch (IndexOutOfBoundsException e) {
            // Every access above is checked before it is made; this is a second guard.
            throw l.refuse("region-inside", "an access outside the segment: " + e.getMessage());
        }
        return l;
    }

    private void check(long fileSize, String instanceName) {
        byte[] magic = new byte[8];
        MemorySegment.copy(seg, JAVA_BYTE, H_MAGIC, magic, 0, 8);
        if (!new String(magic, StandardCharsets.ISO_8859_1).equals("PARAMBUS")) {
            throw refuse("magic", "the file does not start with PARAMBUS");
        }
        int version = u32(H_VERSION);
        if (version != FORMAT_VERSION) {
            throw refuse("version", "format version " + Integer.toUnsignedString(version) + ", this reader knows "
                    + FORMAT_VERSION);
        }
        if (u32(H_HEADER_SIZE) != HEADER_SIZE) {
            throw refuse("header-size", "header_size " + u32L(H_HEADER_SIZE) + ", not 256");
        }
        segmentSize = u64(H_SEGMENT_SIZE);
        if (segmentSize != fileSize) {
            throw refuse("segment-size", "segment_size " + Long.toUnsignedString(segmentSize) + ", the file has "
                    + fileSize + " bytes");
        }
        if (u32(H_DESCRIPTOR_SIZE) != DESCRIPTOR_SIZE) {
            throw refuse("descriptor-size", "descriptor_size " + u32L(H_DESCRIPTOR_SIZE) + ", not 128");
        }
        long count = u32L(H_PARAM_COUNT);
        if (count > PARAM_MAX) {
            throw refuse("param-count", "param_count " + count + ", above 65535");
        }
        paramCount = (int) count;
        int nul = -1;
        for (int k = 0; k < 64; k++) {
            if (seg.get(JAVA_BYTE, H_INSTANCE + k) == 0) {
                nul = k;
                break;
            }
        }
        if (nul < 0) {
            throw refuse("instance-terminated", "the header's instance name has no NUL within 64 bytes");
        }
        byte[] inst = new byte[nul];
        MemorySegment.copy(seg, JAVA_BYTE, H_INSTANCE, inst, 0, nul);
        instance = new String(inst, StandardCharsets.UTF_8);
        wakeSize = u64(H_WAKE_SIZE);
        long need = wakeNeed(count);
        if (Long.compareUnsigned(wakeSize, need) < 0 || Long.compareUnsigned(wakeSize, need + WAKE_SLACK_MAX) > 0) {
            throw refuse("wake-size", "wake_size " + Long.toUnsignedString(wakeSize) + " for " + count
                    + " parameters, which need " + need + " to " + (need + WAKE_SLACK_MAX));
        }
        enumCount = u32(H_ENUM_COUNT);
        long enums = Integer.toUnsignedLong(enumCount);
        descriptorsOffset = u64(H_DESCRIPTORS);
        enumsOffset = u64(H_ENUMS);
        enumeratorsOffset = u64(H_ENUMERATORS);
        stringsOffset = u64(H_STRINGS);
        stringsSize = u64(H_STRINGS_SIZE);
        slotsOffset = u64(H_SLOTS);
        slotsSize = u64(H_SLOTS_SIZE);
        auxOffset = u64(H_AUX);
        long total = segmentSize;
        if (!inside(descriptorsOffset, DESCRIPTOR_SIZE * count, total)) {
            throw refuse("region-inside", "the descriptors (" + count + " at " + Long.toUnsignedString(descriptorsOffset)
                    + ") end beyond the segment of " + total + " bytes");
        }
        if (!inside(enumsOffset, 16 * enums, total)) {
            throw refuse("region-inside", "the enum records (" + enums + " at " + Long.toUnsignedString(enumsOffset)
                    + ") end beyond the segment");
        }
        if (!inside(stringsOffset, stringsSize, total)) {
            throw refuse("region-inside", "the string pool (" + Long.toUnsignedString(stringsSize) + " bytes at "
                    + Long.toUnsignedString(stringsOffset) + ") ends beyond the segment");
        }
        if (!inside(slotsOffset, slotsSize, total)) {
            throw refuse("region-inside", "the slots (" + Long.toUnsignedString(slotsSize) + " bytes at "
                    + Long.toUnsignedString(slotsOffset) + ") end beyond the segment");
        }
        if (!inside(auxOffset, AUX_SIZE * count, total)) {
            throw refuse("region-inside", "the aux records (at " + Long.toUnsignedString(auxOffset)
                    + ") end beyond the segment");
        }
        if (descriptorsOffset % 8 != 0 || enumsOffset % 8 != 0 || enumeratorsOffset % 8 != 0) {
            throw refuse("region-aligned", "descriptors_offset " + Long.toUnsignedString(descriptorsOffset)
                    + ", enums_offset " + Long.toUnsignedString(enumsOffset) + ", enumerators_offset "
                    + Long.toUnsignedString(enumeratorsOffset) + ": each must be a multiple of 8");
        }
        if (slotsOffset % 64 != 0 || auxOffset % 64 != 0) {
            throw refuse("region-aligned", "slots_offset " + Long.toUnsignedString(slotsOffset) + ", aux_offset "
                    + Long.toUnsignedString(auxOffset) + ": each must be a multiple of 64");
        }
        if (stringsSize == 0) {
            throw refuse("strings-size", "strings_size 0");
        }
        interfaceName = poolString(u32L(H_INTERFACE), u32L(H_INTERFACE_LENGTH), "the interface name");
        interfaceMajor = u32(H_MAJOR);
        interfaceMinor = u32(H_MINOR);

        enumNames = new String[(int) enums];
        enumFirst = new int[(int) enums];
        enumSize = new int[(int) enums];
        long enumeratorTotal = 0;
        for (int e = 0; e < enums; e++) {
            long rec = enumsOffset + 16L * e;
            enumNames[e] = poolString(u32L(rec), u32L(rec + 4), "the name of enum record " + e);
            long first = u32L(rec + 8), n = u32L(rec + 12);
            if (first != enumeratorTotal || n == 0) {
                throw refuse("enum-record", "enum record " + e + " has first " + first + " and count " + n
                        + " (first must be " + enumeratorTotal + ", count at least 1)");
            }
            enumFirst[e] = (int) first;
            enumSize[e] = (int) n;
            enumeratorTotal += n;
        }
        if (!inside(enumeratorsOffset, 16 * enumeratorTotal, total)) {
            throw refuse("enumerators-inside", enumeratorTotal + " enumerators at "
                    + Long.toUnsignedString(enumeratorsOffset) + " end beyond the segment");
        }
        enumeratorValues = new int[(int) enumeratorTotal];
        enumeratorLabels = new String[(int) enumeratorTotal];
        for (int k = 0; k < enumeratorTotal; k++) {
            long rec = enumeratorsOffset + 16L * k;
            enumeratorValues[k] = u32(rec);
            enumeratorLabels[k] = poolString(u32L(rec + 4), u32L(rec + 8), "the label of enumerator " + k);
        }

        int n = paramCount;
        names = new String[n];
        units = new String[n];
        descriptions = new String[n];
        groups = new String[n];
        types = new int[n];
        updateClasses = new int[n];
        flags = new int[n];
        valueSizes = new int[n];
        elementSizes = new int[n];
        copyStrides = new int[n];
        copyCounts = new int[n];
        gids = new int[n];
        enumIndexes = new long[n];
        slotOffsets = new long[n];
        mins = new long[n];
        maxs = new long[n];
        steps = new long[n];
        defaults = new byte[n][];
        for (int i = 0; i < n; i++) {
            checkDescriptor(i, descriptorsOffset + (long) DESCRIPTOR_SIZE * i);
        }
        if (!instance.equals(instanceName)) {
            throw refuse("instance", "the segment is instance \"" + printable(instance) + "\"'s, not \"" + instanceName
                    + "\"'s");
        }
        schemaHash = u64(H_SCHEMA_HASH);
        instanceId = u64(H_INSTANCE_ID);
        ownerPid = u32(H_OWNER_PID);
        ownerStart = u32(H_OWNER_START);
        createdNs = u64(H_CREATED);
        wakeId = u32(H_WAKE_ID);
    }

    private void checkDescriptor(int i, long d) {
        String p = "parameter " + i;
        long nameLength = u32L(d + 4);
        names[i] = poolString(u32L(d), nameLength, "the name of " + p);
        p = p + " (" + printable(names[i]) + ")";
        if (nameLength == 0) {
            throw refuse("name-length", "the name of parameter " + i + " is empty");
        }
        units[i] = poolString(u32L(d + 8), u32L(d + 12), "the unit of " + p);
        descriptions[i] = poolString(u32L(d + 16), u32L(d + 20), "the description of " + p);
        groups[i] = poolString(u32L(d + 24), u32L(d + 28), "the group of " + p);
        long defaultOffset = u32L(d + 88), defaultLength = u32L(d + 92);
        if (!inside(defaultOffset, defaultLength, stringsSize)) {
            throw refuse("default-inside", "the default of " + p + " (" + defaultLength + " bytes at pool offset "
                    + defaultOffset + ") ends beyond the string pool");
        }
        int type = Byte.toUnsignedInt(seg.get(JAVA_BYTE, d + 32));
        ParamType t = ParamType.ofCode(type);
        if (t == null) {
            throw refuse("type", p + " has the type code 0x" + Integer.toHexString(type) + ", which names no type");
        }
        int updateClass = Byte.toUnsignedInt(seg.get(JAVA_BYTE, d + 33));
        if (updateClass > 3) {
            throw refuse("update-class", p + " has update_class " + updateClass);
        }
        long valueSize = u32L(d + 36);
        if (valueSize == 0 || valueSize > VALUE_SIZE_MAX) {
            throw refuse("value-size", p + " has value_size " + valueSize + " (1 to 65536)");
        }
        if (defaultLength > valueSize) {
            throw refuse("default-length", p + " has default_length " + defaultLength + ", above its value_size "
                    + valueSize);
        }
        long stride = u32L(d + 56);
        long wantStride = (16 + valueSize + 7) / 8 * 8;
        if (stride != wantStride) {
            throw refuse("copy-stride", p + " has copy_stride " + stride + ", not " + wantStride);
        }
        long copies = u32L(d + 100);
        long wantCopies = valueSize > 256 ? 4 : 2;
        if (copies != wantCopies) {
            throw refuse("copy-count", p + " has copy_count " + copies + ", not " + wantCopies);
        }
        long slotSize = u32L(d + 60);
        if (slotSize < 16 + copies * stride) {
            throw refuse("slot-size", p + " has slot_size " + slotSize + ", below 16 + " + copies + " x " + stride);
        }
        long slot = u64(d + 48);
        if (slot % 64 != 0) {
            throw refuse("slot-aligned", p + " has slot_offset " + Long.toUnsignedString(slot)
                    + ", not a multiple of 64");
        }
        if (!inside(slot, slotSize, segmentSize) || Long.compareUnsigned(slot, slotsOffset) < 0
                || Long.compareUnsigned(slot + slotSize, slotsOffset + slotsSize) > 0) {
            throw refuse("slot-inside", p + "'s slot (" + slotSize + " bytes at " + Long.toUnsignedString(slot)
                    + ") is not inside the slot region");
        }
        long elementSize = u32L(d + 40);
        if (t == ParamType.STRING || t == ParamType.BYTES) {
            if (elementSize != 1) {
                throw refuse("element-size", p + " (" + t.spelling() + ") has element_size " + elementSize + ", not 1");
            }
        } else {
            long esize = t.element().elementSize();
            if (elementSize != esize || valueSize % esize != 0 || (!t.isArray() && valueSize != esize)) {
                throw refuse("element-size", p + " (" + t.spelling() + ") has element_size " + elementSize
                        + " and value_size " + valueSize);
            }
        }
        long enumIndex = u32L(d + 44);
        if (t.element() == ParamType.ENUM ? enumIndex >= Integer.toUnsignedLong(enumCount) : enumIndex != NO_ENUM) {
            throw refuse("enum-index", p + " (" + t.spelling() + ") has enum_index " + enumIndex + " with "
                    + Integer.toUnsignedString(enumCount) + " enum records");
        }
        types[i] = type;
        updateClasses[i] = updateClass;
        flags[i] = Short.toUnsignedInt((short) (u32(d + 32) >>> 16));
        valueSizes[i] = (int) valueSize;
        elementSizes[i] = (int) elementSize;
        copyStrides[i] = (int) stride;
        copyCounts[i] = (int) copies;
        gids[i] = u32(d + 96);
        enumIndexes[i] = enumIndex;
        slotOffsets[i] = slot;
        mins[i] = u64(d + 64);
        maxs[i] = u64(d + 72);
        steps[i] = u64(d + 80);
        byte[] def = new byte[(int) defaultLength];
        MemorySegment.copy(seg, JAVA_BYTE, stringsOffset + defaultOffset, def, 0, def.length);
        defaults[i] = def;
    }
}
