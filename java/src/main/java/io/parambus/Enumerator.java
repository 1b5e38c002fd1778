package io.parambus;

import java.util.List;

/**
 * One enumerator of an enum parameter (docs/segment-format.md §2.3): its value and its
 * label, in declaration order. Labels are unique within an enum; values may repeat. The
 * table's {@link Param} and the socket client's {@code ParamInfo} both list their
 * enumerators with this type and look them up with the two functions below.
 *
 * @param value the stored value (an int32)
 * @param label the label, as the schema gave it
 */
public record Enumerator(int value, String label) {

    /** The label of the first enumerator in {@code list} with {@code value}, or {@code null} if none has it. */
    public static String labelOf(List<Enumerator> list, int value) {
        for (Enumerator e : list) {
            if (e.value() == value) {
                return e.label();
            }
        }
        return null;
    }

    /**
     * The value of the enumerator in {@code list} labelled {@code label}, spelt exactly, or
     * with {@code anyCase} in any case (the exact spelling first); {@code null} if none is.
     */
    public static Integer valueOf(List<Enumerator> list, String label, boolean anyCase) {
        for (Enumerator e : list) {
            if (e.label().equals(label)) {
                return e.value();
            }
        }
        if (anyCase) {
            for (Enumerator e : list) {
                if (e.label().equalsIgnoreCase(label)) {
                    return e.value();
                }
            }
        }
        return null;
    }
}
