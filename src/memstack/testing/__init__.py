"""Test helpers shipped with the library: fakes of *external* services, never of memstack itself."""
