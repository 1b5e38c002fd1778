package io.parambus;

import java.util.List;

/**
 * What the segment says of one parameter (docs/segment-format.md §2.2, §2.3): name,
 * type, flags, limits, default and enumerators. Made once when the table is opened,
 * from the validated descriptor; it reads nothing from the mapping afterwards.
 *
 * <p>Thread-safety: immutable; use it from any thread.
 */
public final class Param {
    private final int index;
    private final String name, unit, description, group;
    private final ParamType type;
    private final UpdateClass updateClass;
    private final int flags, valueSize, elementSize, gid;
    private final long min, max, step;
    private final byte[] defaultValue;
    private final String enumName;
    private final List<Enumerator> enumerators;

    Param(int index, String name, String unit, String description, String group, ParamType type,
            UpdateClass updateClass, int flags, int valueSize, int elementSize, int gid, long min, long max,
            long step, byte[] defaultValue, String enumName, List<Enumerator> enumerators) {
        this.index = index;
        this.name = name;
        this.unit = unit;
        this.description = description;
        this.group = group;
        this.type = type;
        this.updateClass = updateClass;
        this.flags = flags;
        this.valueSize = valueSize;
        this.elementSize = elementSize;
        this.gid = gid;
        this.min = min;
        this.max = max;
        this.step = step;
        this.defaultValue = defaultValue;
        this.enumName = enumName;
        this.enumerators = enumerators;
    }

    /** The parameter's index (its position in the schema), which generated classes use. */
    public int index() {
        return index;
    }

    /** Its full name, e.g. {@code "identity.serial"}. */
    public String name() {
        return name;
    }

    /** Its unit ({@code "V"}), or {@code ""}. */
    public String unit() {
        return unit;
    }

    /** Its description, or {@code ""}. */
    public String description() {
        return description;
    }

    /** The Unix group allowed to write it through pbusd, or {@code ""}. */
    public String group() {
        return group;
    }

    /** The group's id as pbusd resolved it, or -1 if none. */
    public int gid() {
        return gid;
    }

    /** Its type. */
    public ParamType type() {
        return type;
    }

    /** How often it changes. */
    public UpdateClass updateClass() {
        return updateClass;
    }

    /** Whether only a table opened as {@link ParamTable.Access#PROVIDER} may write it. */
    public boolean isReadOnly() {
        return (flags & SegmentLayout.F_READONLY) != 0;
    }

    /** Whether pbusd saves it across restarts. */
    public boolean isPersistent() {
        return (flags & SegmentLayout.F_PERSISTENT) != 0;
    }

    /** Whether pbusd keeps it out of its socket's GET and SUBSCRIBE (the table still reads it). */
    public boolean isNoRead() {
        return (flags & SegmentLayout.F_NOREAD) != 0;
    }

    /** Whether pbusd refuses socket subscriptions to it. */
    public boolean isNoSubscriptions() {
        return (flags & SegmentLayout.F_NOSUBSCRIPTIONS) != 0;
    }

    /** The capacity of its value in bytes (a string's or array's maximum). */
    public int valueSize() {
        return valueSize;
    }

    /** The size of one scalar or array element; 1 for strings and bytes. */
    public int elementSize() {
        return elementSize;
    }

    /** Whether {@link #minBits()} is a limit. */
    public boolean hasMin() {
        return (flags & SegmentLayout.F_HAS_MIN) != 0;
    }

    /** Whether {@link #maxBits()} is a limit. */
    public boolean hasMax() {
        return (flags & SegmentLayout.F_HAS_MAX) != 0;
    }

    /** Whether {@link #stepBits()} is set (informative: writes are not rounded). */
    public boolean hasStep() {
        return (flags & SegmentLayout.F_HAS_STEP) != 0;
    }

    /** Whether the parameter has a default ({@link #defaultValue()}). */
    public boolean hasDefault() {
        return (flags & SegmentLayout.F_HAS_DEFAULT) != 0;
    }

    /**
     * The lower limit's raw 64 bits: a {@code long} for signed types, an unsigned one for
     * unsigned types, the bits of a {@code double} for float and double alike. Valid if
     * {@link #hasMin()}.
     */
    public long minBits() {
        return min;
    }

    /** The upper limit's raw 64 bits, as {@link #minBits()}. Valid if {@link #hasMax()}. */
    public long maxBits() {
        return max;
    }

    /** The step's raw 64 bits, as {@link #minBits()}. Valid if {@link #hasStep()}. */
    public long stepBits() {
        return step;
    }

    /** The default in its stored encoding (a new copy each call); empty without a default. */
    public byte[] defaultValue() {
        return hasDefault() ? defaultValue.clone() : new byte[0];
    }

    /** The fully qualified name of its enum, or {@code null} if it is not an enum. */
    public String enumName() {
        return enumName;
    }

    /** Its enumerators in declaration order (empty if it is not an enum); an unmodifiable list. */
    public List<Enumerator> enumerators() {
        return enumerators;
    }

    /** The label of the first enumerator with {@code value}, or {@code null} if none has it. */
    public String label(int value) {
        return Enumerator.labelOf(enumerators, value);
    }

    /**
     * The value of the enumerator {@code label}.
     *
     * @throws ParambusException {@code ENOENT} if the enum has no such label
     */
    public int valueOf(String label) {
        Integer value = Enumerator.valueOf(enumerators, label, false);
        if (value != null) {
            return value;
        }
        throw new ParambusException("ENOENT", "enum value of " + name + ": ENOENT: no enumerator " + label
                + (enumName == null ? " (not an enum)" : " in " + enumName));
    }

    @Override
    public String toString() {
        return name + " (" + type.spelling() + ", index " + index + ")";
    }
}
