from briefd.cli.main import run

run()
