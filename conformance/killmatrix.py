"""`python -m conformance.killmatrix [VARIANT ...]`: the kill matrix's command under the name the
issues and users give it; the matrix itself is conformance.calibration.kill_matrix."""
from conformance.calibration.kill_matrix import main

if __name__ == "__main__":
    raise SystemExit(main())
