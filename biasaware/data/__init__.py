"""The data stage: base pairs, bias injection, verification and the builders of probes, training rows and traces."""
