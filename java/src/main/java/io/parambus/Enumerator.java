package io.parambus;

/**
 * One enumerator of an enum parameter (docs/segment-format.md §2.3): its value and its
 * label, in declaration order. Labels are unique within an enum; values may repeat.
 *
 * @param value the stored value (an int32)
 * @param label the label, as the schema gave it
 */
public record Enumerator(int value, String label) {
}
