from briefd.cli.launch import run

run()
