package io.parambus.client;

/**
 * pbusd refused a {@link WriteBatch}: nothing of the batch was written
 * (docs/socket-protocol.md §3.3). {@link #code()} is the first refusal's code,
 * {@link #results()} every write's own code in the batch's order (0 for writes that were
 * fine but not applied because of another), {@link #refusedPosition()} the position of
 * the first refused write and {@link #refusedParam()} its parameter; the message names
 * that parameter, the value sent and why ("set psu: level = 5000: outside its limits
 * -1000 … 1000 (ERANGE); nothing was written"). {@code EBUSY}: another writer held a
 * parameter for a second; the batch may be tried again later. Immutable, so thread-safe.
 */
public final class SetRefusedException extends ServerErrorException {
    private static final long serialVersionUID = 1L;

    private final int[] results;
    private final int refusedPosition;
    private final transient ParamInfo refusedParam;

    SetRefusedException(int code, String message, String reason, int[] results, int refusedPosition,
            ParamInfo refusedParam) {
        super(code, message, reason);
        this.results = results.clone();
        this.refusedPosition = refusedPosition;
        this.refusedParam = refusedParam;
    }

    /** Every write's code in the batch's order: 0, or a negative errno. A new array each call. */
    public int[] results() {
        return results.clone();
    }

    /** The position in the batch of the first write with a non-zero code, -1 if none has one. */
    public int refusedPosition() {
        return refusedPosition;
    }

    /** The parameter of the first refused write; {@code null} if its index is not in the schema. */
    public ParamInfo refusedParam() {
        return refusedParam;
    }
}
