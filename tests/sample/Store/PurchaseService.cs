using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Arcadia.Backend.Common;
using Arcadia.Backend.Items;

namespace Arcadia.Backend.Store;

/// <summary>A receipt sent by the client after an in-app purchase.</summary>
/// <param name="ProductId">The store's product identifier, e.g. <c>gems_pack_small</c>.</param>
/// <param name="TransactionId">Unique per purchase; used to reject replays.</param>
/// <param name="Payload">The raw receipt data as issued by the app store.</param>
/// <param name="Signature">The store's Base64 RSA signature over <paramref name="Payload"/>.</param>
public sealed record StoreReceipt(string ProductId, string TransactionId, string Payload, string Signature);

/// <summary>
/// Thrown when a receipt fails validation; the message is safe to log but not to show players.
/// </summary>
public class ReceiptValidationException : Exception
{
    /// <summary>Creates the exception for the given transaction.</summary>
    public ReceiptValidationException(string transactionId, string reason)
        : base($"Receipt {transactionId} rejected: {reason}")
    {
        TransactionId = transactionId;
    }

    /// <summary>The transaction that failed.</summary>
    public string TransactionId { get; }
}

/// <summary>
/// Handles in-app purchases: checks the receipt the app store issued, then grants the
/// bought items to the player's inventory exactly once.
/// </summary>
public class PurchaseService
{
    private readonly RSA _storePublicKey;
    private readonly IClock _clock;
    private readonly HashSet<string> _processedTransactions = new();
    private readonly Dictionary<string, (string ItemId, int Quantity)[]> _catalog;

    /// <summary>
    /// Creates the service.
    /// </summary>
    /// <param name="storePublicKeyPem">The app store's public key, in PEM format.</param>
    /// <param name="catalog">What each product id grants.</param>
    /// <param name="clock">Used to timestamp grants.</param>
    public PurchaseService(
        string storePublicKeyPem,
        Dictionary<string, (string ItemId, int Quantity)[]> catalog,
        IClock clock)
    {
        _storePublicKey = RSA.Create();
        _storePublicKey.ImportFromPem(storePublicKeyPem);
        _catalog = catalog;
        _clock = clock;
    }

    /// <summary>
    /// Verifies that a receipt really came from the app store: the RSA signature over the
    /// payload must match the store's public key, and the transaction must not be a replay.
    /// </summary>
    /// <exception cref="ReceiptValidationException">When any check fails.</exception>
    public void ValidateReceipt(StoreReceipt receipt)
    {
        if (_processedTransactions.Contains(receipt.TransactionId))
        {
            throw new ReceiptValidationException(receipt.TransactionId, "already processed");
        }

        byte[] signature;
        try
        {
            signature = Convert.FromBase64String(receipt.Signature);
        }
        catch (FormatException)
        {
            throw new ReceiptValidationException(receipt.TransactionId, "signature is not Base64");
        }

        var data = Encoding.UTF8.GetBytes(receipt.Payload);
        if (!_storePublicKey.VerifyData(data, signature, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1))
        {
            throw new ReceiptValidationException(receipt.TransactionId, "bad signature");
        }

        if (!_catalog.ContainsKey(receipt.ProductId))
        {
            throw new ReceiptValidationException(receipt.TransactionId, $"unknown product '{receipt.ProductId}'");
        }
    }

    /// <summary>
    /// Adds the items a product grants to the player's inventory and records the
    /// transaction so the same receipt can never be redeemed twice.
    /// </summary>
    /// <returns>A short log line describing the grant.</returns>
    public string GrantItems(StoreReceipt receipt, Inventory inventory)
    {
        foreach (var (itemId, quantity) in _catalog[receipt.ProductId])
        {
            inventory.AddItem(itemId, quantity);
        }

        _processedTransactions.Add(receipt.TransactionId);
        return $"{{\"tx\":\"{receipt.TransactionId}\",\"at\":\"{_clock.UtcNow.ToIsoString()}\"}}";
    }

    /// <summary>
    /// Validates a receipt and grants its items; the entry point used by the purchase endpoint.
    /// </summary>
    public async Task<bool> RedeemAsync(StoreReceipt receipt, Inventory inventory, CancellationToken cancellationToken = default)
    {
        try
        {
            ValidateReceipt(receipt);
        }
        catch (ReceiptValidationException)
        {
            return false;
        }

        // Give the store's server-side notification a moment to arrive before granting.
        await _clock.DelayAsync(TimeSpan.FromMilliseconds(50), cancellationToken);
        GrantItems(receipt, inventory);
        return true;
    }
}
