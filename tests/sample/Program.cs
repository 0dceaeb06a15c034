using System;
using System.Collections.Generic;
using Arcadia.Backend.Auth;
using Arcadia.Backend.Common;
using Arcadia.Backend.Energy;
using Arcadia.Backend.Items;
using Arcadia.Backend.Matchmaking;
using Arcadia.Backend.Store;

// A tiny smoke run of the backend services, as the dev server wires them together.

// Placeholder dev key; staging and production read the real one from configuration.
const string StorePublicKey = @"-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo
4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u
-----END PUBLIC KEY-----";

IClock clock = SystemClock.Default;

var hasher = new PasswordHasher();
var stored = hasher.HashPassword("correct horse battery staple");
Console.WriteLine($"login ok: {hasher.VerifyPassword("correct horse battery staple", stored)}");

var energy = new EnergySystem(TimeSpan.FromMinutes(20));
energy.SpendEnergy(2, clock.UtcNow);
var refilled = energy.RefillTimers(clock.UtcNow.AddMinutes(25));
Console.WriteLine($"energy {energy.Current}/{energy.MaxEnergy} (refilled {refilled})");

var inventory = new Inventory(id => id.StartsWith("skin_") ? ItemRarity.Epic : ItemRarity.Common);
var catalog = new Dictionary<string, (string ItemId, int Quantity)[]>
{
    ["gems_pack_small"] = new[] { ("gem", 100) },
    ["starter_bundle"] = new[] { ("gem", 250), ("skin_knight", 1) },
};

var store = new PurchaseService(StorePublicKey, catalog, clock);
var receipt = new StoreReceipt("starter_bundle", "tx-0001", "payload", "c2lnbmF0dXJl");
var redeemed = await store.RedeemAsync(receipt, inventory);
Console.WriteLine($"redeemed: {redeemed}, gems: {inventory["gem"]}");

var matchmaker = new Matchmaker(clock) { InitialWindow = 100 };
var alice = matchmaker.Enqueue("alice", 1510);
matchmaker.Enqueue("bob", 1580);
Console.WriteLine($"{alice} vs {matchmaker.FindMatch(alice)?.ToString() ?? "nobody yet"}");
Console.WriteLine($"done at {clock.UtcNow.ToIsoString()}");
