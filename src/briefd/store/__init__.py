"""The SQLite index (X0): connections, migrations, documents, links and search SQL."""
