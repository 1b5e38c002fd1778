package io.parambus;

/**
 * A value's alarm status, EPICS's alarm severities (docs/segment-format.md §2.5).
 * A writer stores only these four; a reader that meets another number (§2.8) keeps
 * it as a number ({@code Sample.statusCode()}) and {@link #ofCode(int)} maps it to
 * {@link #INVALID}.
 */
public enum Status {
    OK, MINOR, MAJOR, INVALID;

    private static final Status[] VALUES = values();

    /** The status code as stored (0 … 3). */
    public int code() {
        return ordinal();
    }

    /** The status of a stored code; any code above 3 reads as {@link #INVALID}. */
    public static Status ofCode(int code) {
        return code >= 0 && code <= 3 ? VALUES[code] : INVALID;
    }

    /** The name as the tools print it: {@code ok}, {@code minor}, {@code major}, {@code invalid}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
