"""The one render step: every render of the farm (fleet jobs, the audit's re-render, ``farm build``)
goes through here. ``step`` renders a request (lock check, chart fulfilment, bounded render child);
``fetch`` reads a stored request and refuses one that cannot be trusted (digest, action key,
profile gate)."""
