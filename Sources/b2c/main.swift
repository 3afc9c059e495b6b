import B2CCLI

await B2CCommand.run()
