package io.parambus.client;

import io.parambus.Enumerator;
import io.parambus.ParamType;
import io.parambus.UpdateClass;

import java.util.List;
import java.util.Map;

/**
 * What the compiled schema says of one parameter (docs/schema-format.md): its index,
 * name, type, capacity, limits, enumerators, flags and texts. The client reads it from
 * the schema pbusd sends at connect ({@link PbusClient#schema()}). Limits are kept as
 * the segment keeps them (docs/segment-format.md §2.2): as a signed 64-bit integer for
 * signed types, as the unsigned 64-bit value's bits for unsigned ones, as the bits of a
 * binary64 for {@code float} and {@code double} alike; {@link #min()} and {@link #max()}
 * give them as doubles. Immutable, so thread-safe.
 */
public final class ParamInfo {
    /** A flag of {@link #flags()}: written by the instrument's provider only. */
    public static final int READONLY = 1;
    /** A flag of {@link #flags()}: saved by pbusd and restored at its start. */
    public static final int PERSISTENT = 2;
    /** A flag of {@link #flags()}: hidden from the socket's GET and SUBSCRIBE. */
    public static final int NOREAD = 4;
    /** A flag of {@link #flags()}: not to be subscribed to. */
    public static final int NOSUBSCRIPTIONS = 8;

    private final int index;
    private final String name;
    private final ParamType type;
    private final int valueSize;
    private final int flags;
    private final UpdateClass updateClass;
    private final String unit;
    private final String description;
    private final String group;
    private final boolean hasMin, hasMax, hasStep;
    private final long minBits, maxBits, stepBits;
    private final byte[] defaultValue;
    private final String enumName;
    private final List<Enumerator> enumerators;
    private final Map<String, String> extraKeys;

    ParamInfo(int index, String name, ParamType type, int valueSize, int flags, UpdateClass updateClass,
            String unit, String description, String group, boolean hasMin, long minBits, boolean hasMax,
            long maxBits, boolean hasStep, long stepBits, byte[] defaultValue, String enumName,
            List<Enumerator> enumerators, Map<String, String> extraKeys) {
        this.index = index;
        this.name = name;
        this.type = type;
        this.valueSize = valueSize;
        this.flags = flags;
        this.updateClass = updateClass;
        this.unit = unit;
        this.description = description;
        this.group = group;
        this.hasMin = hasMin;
        this.minBits = minBits;
        this.hasMax = hasMax;
        this.maxBits = maxBits;
        this.hasStep = hasStep;
        this.stepBits = stepBits;
        this.defaultValue = defaultValue;
        this.enumName = enumName;
        this.enumerators = List.copyOf(enumerators);
        this.extraKeys = Map.copyOf(extraKeys);
    }

    /** The index: the parameter's position among the schema's {@code param} records, from 0. */
    public int index() {
        return index;
    }

    /** The name, e.g. {@code identity.serial}. */
    public String name() {
        return name;
    }

    /** The type. */
    public ParamType type() {
        return type;
    }

    /** The capacity in bytes: a scalar's size, a string's or byte buffer's {@code size}, an array's {@code count} × element size. */
    public int valueSize() {
        return valueSize;
    }

    /** The size of one element (of a scalar: its size; of a string or bytes: 1). */
    public int elementSize() {
        return type.elementSize();
    }

    /** An array's capacity in elements ({@code count}); 1 for scalars; the capacity in bytes for strings and bytes. */
    public int count() {
        return valueSize / type.elementSize();
    }

    /** The flags: {@link #READONLY}, {@link #PERSISTENT}, {@link #NOREAD}, {@link #NOSUBSCRIPTIONS}. */
    public int flags() {
        return flags;
    }

    /** Whether only the instrument's provider writes it (the socket's SET refuses it with {@code EACCES}). */
    public boolean isReadOnly() {
        return (flags & READONLY) != 0;
    }

    /** Whether pbusd saves it. */
    public boolean isPersistent() {
        return (flags & PERSISTENT) != 0;
    }

    /** Whether the socket's GET and SUBSCRIBE refuse it ({@code EACCES}). */
    public boolean isNoRead() {
        return (flags & NOREAD) != 0;
    }

    /** Whether SUBSCRIBE refuses it ({@code EACCES}). */
    public boolean isNoSubscriptions() {
        return (flags & NOSUBSCRIPTIONS) != 0;
    }

    /** How often it changes (the schema's {@code class}; {@code setting} when absent). */
    public UpdateClass updateClass() {
        return updateClass;
    }

    /** The unit ({@code V}, {@code degC}); empty if none. */
    public String unit() {
        return unit;
    }

    /** The description; empty if none. */
    public String description() {
        return description;
    }

    /** The Unix group that may write it through the socket besides its owner; empty if none. */
    public String group() {
        return group;
    }

    /** Whether it has a lower limit (per element for arrays). */
    public boolean hasMin() {
        return hasMin;
    }

    /** Whether it has an upper limit (per element for arrays). */
    public boolean hasMax() {
        return hasMax;
    }

    /** Whether it has a step. */
    public boolean hasStep() {
        return hasStep;
    }

    /** Whether it has a default value. */
    public boolean hasDefault() {
        return defaultValue != null;
    }

    /** The lower limit as stored (see the class comment); 0 without one. */
    public long minBits() {
        return minBits;
    }

    /** The upper limit as stored (see the class comment); 0 without one. */
    public long maxBits() {
        return maxBits;
    }

    /** The step as stored (see the class comment); 0 without one. */
    public long stepBits() {
        return stepBits;
    }

    /** The lower limit as a double (unsigned 64-bit limits above 2^53 rounded); negative infinity without one. */
    public double min() {
        return hasMin ? ValueCodec.numberAsDouble(type.element(), minBits) : Double.NEGATIVE_INFINITY;
    }

    /** The upper limit as a double; positive infinity without one. */
    public double max() {
        return hasMax ? ValueCodec.numberAsDouble(type.element(), maxBits) : Double.POSITIVE_INFINITY;
    }

    /** The default value in its stored encoding (a new array each call); {@code null} without one. */
    public byte[] defaultValue() {
        return defaultValue == null ? null : defaultValue.clone();
    }

    /** An enum parameter's enumeration: its fully qualified name; {@code null} for other types. */
    public String enumName() {
        return enumName;
    }

    /** An enum parameter's enumerators in declaration order; empty for other types. */
    public List<Enumerator> enumerators() {
        return enumerators;
    }

    /** The label of enumerator value {@code value}, or {@code null} if this parameter has none with it. */
    public String enumLabel(int value) {
        return Enumerator.labelOf(enumerators, value);
    }

    /**
     * The keys of the schema's record that this client does not interpret (a hardware
     * binding's {@code hw-*} keys, later deployment keys), with their decoded values.
     */
    public Map<String, String> extraKeys() {
        return extraKeys;
    }

    /**
     * The text of a value of this parameter in its stored encoding, as {@code pbus get}
     * prints it (numbers in the shortest form that reads back, enums by label, bytes in
     * hex, array elements joined by commas).
     */
    public String format(byte[] value) {
        return ValueCodec.format(this, value, 0, value.length);
    }

    /**
     * A value of this parameter from text, as {@code pbus set} reads it, in its stored
     * encoding; checked against the type, the capacity, the limits and the enumerators.
     *
     * @throws io.parambus.ParambusException {@code EINVAL} (not a value of the type),
     *         {@code ERANGE} (outside the limits or the type's range, not an enumerator),
     *         {@code EMSGSIZE} (longer than the capacity); the message names the parameter
     */
    public byte[] parse(String text) {
        try {
            return ValueCodec.parse(this, text);
        } catch (ValueCodec.Invalid e) {
            throw new io.parambus.ParambusException(Errno.name(e.errno), "parse " + name + " '" + text + "': "
                    + e.getMessage() + " (" + Errno.name(e.errno) + ")");
        }
    }

    /** The name, type and index, e.g. {@code level (double, #21)}. */
    @Override
    public String toString() {
        return name + " (" + type.spelling() + ", #" + index + ")";
    }
}
