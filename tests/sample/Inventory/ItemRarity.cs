namespace Arcadia.Backend.Items;

/// <summary>
/// How rare an item is; drives drop rates and the colour of the item frame in the client.
/// </summary>
public enum ItemRarity
{
    /// <summary>Drops from any level.</summary>
    Common = 0,

    /// <summary>Drops from chests.</summary>
    Rare = 1,

    /// <summary>Drops from boss levels and premium chests.</summary>
    Epic = 2,

    /// <summary>Only from events and the store.</summary>
    Legendary = 3,
}
