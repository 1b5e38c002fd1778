package io.parambus;

/** How often a parameter changes (docs/segment-format.md §2.2, the deployment's {@code UpdateClass}). */
public enum UpdateClass {
    CONSTANT, RARE, SETTING, LIVE;

    private static final UpdateClass[] VALUES = values();

    /** The class of a stored code (0 … 3), or {@code null} for any other. */
    public static UpdateClass ofCode(int code) {
        return code >= 0 && code <= 3 ? VALUES[code] : null;
    }
}
