package io.parambus;

/**
 * Where an opened instance stands (docs/segment-format.md §6), as
 * {@link ParamTable#state()} reports it. Values stay readable in every state.
 */
public enum TableState {
    /** pbusd runs and owns this segment. */
    LIVE,
    /** pbusd shut down cleanly; the values are the last ones written. Writes and waits fail with ESTALE. */
    CLOSED,
    /** A restarted pbusd made a new segment: open the instance again. Writes and waits fail with ESTALE. */
    REPLACED,
    /** pbusd died (its process is gone); the values are the last ones written until a new pbusd replaces them. */
    ORPHANED
}
