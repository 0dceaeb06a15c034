//! The Rust oracle: syn, the parser Rust's own macros use, names the chunks a Rust file must
//! give. Reads file paths, one a line, on stdin; writes one JSON object a line:
//! {"file": path, "units": [...]} or {"file": path, "error": "..."}.
//! A unit: kind, name, chain (the mods, impls and traits around it, joined by "."), top (its
//! first line, attributes and `///` docs included), sig (its name's line), end (its last
//! line), body (its body's first line; 0 for a type), doc (its `///` text).
//! Units: every fn with a body (in a mod, an impl, a trait's default), every struct, enum,
//! union, type alias and macro_rules!; an impl or trait with no fn body inside, whole; a mod
//! with no unit inside, whole. Nothing inside a body is a unit.
use proc_macro2::Span;
use std::io::{self, BufRead, Write};
use syn::spanned::Spanned;

struct Units {
    out: Vec<String>,
}

fn json(s: &str) -> String {
    let mut b = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                b.push('\\');
                b.push(c)
            }
            c if (c as u32) < 0x20 => b.push_str(&format!("\\u{:04x}", c as u32)),
            c => b.push(c),
        }
    }
    b.push('"');
    b
}

fn line(s: Span) -> usize {
    s.start().line
}

fn end_line(s: Span) -> usize {
    let e = s.end();
    e.line
}

fn doc(attrs: &[syn::Attribute]) -> String {
    let mut words = Vec::new();
    for a in attrs {
        if let Ok(syn::Meta::NameValue(nv)) = a.parse_meta() {
            if nv.path.is_ident("doc") {
                if let syn::Lit::Str(s) = nv.lit {
                    words.extend(s.value().split_whitespace().map(String::from));
                }
            }
        }
    }
    words.join(" ")
}

fn type_name(t: &syn::Type) -> Option<String> {
    match t {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Reference(r) => type_name(&r.elem),
        syn::Type::Paren(p) => type_name(&p.elem),
        syn::Type::Group(g) => type_name(&g.elem),
        _ => None,
    }
}

fn join(chain: &str, name: &str) -> String {
    if chain.is_empty() {
        name.to_string()
    } else {
        format!("{}.{}", chain, name)
    }
}

impl Units {
    #[allow(clippy::too_many_arguments)]
    fn unit(&mut self, kind: &str, name: &str, chain: &str, span: Span, attrs: &[syn::Attribute],
            sig: Span, body: usize) {
        let top = attrs.iter().filter(|a| matches!(a.style, syn::AttrStyle::Outer))
            .map(|a| line(a.span())).chain(std::iter::once(line(span))).min().unwrap();
        self.out.push(format!(
            "{{\"kind\":{},\"name\":{},\"chain\":{},\"top\":{},\"sig\":{},\"end\":{},\"body\":{},\"doc\":{}}}",
            json(kind), json(name), json(chain), top, line(sig), end_line(span), body,
            json(&doc(attrs))));
    }

    /// The units of items; returns how many fn bodies were found.
    fn items(&mut self, items: &[syn::Item], chain: &str) -> usize {
        let mut fns = 0;
        for item in items {
            match item {
                syn::Item::Fn(f) => {
                    fns += 1;
                    self.unit("function", &f.sig.ident.to_string(), chain, item.span(), &f.attrs,
                              f.sig.ident.span(), line(f.block.brace_token.span));
                }
                syn::Item::Struct(s) => self.unit("struct", &s.ident.to_string(), chain,
                                                  item.span(), &s.attrs, s.ident.span(), 0),
                syn::Item::Enum(s) => self.unit("enum", &s.ident.to_string(), chain, item.span(),
                                                &s.attrs, s.ident.span(), 0),
                syn::Item::Union(s) => self.unit("union", &s.ident.to_string(), chain,
                                                 item.span(), &s.attrs, s.ident.span(), 0),
                syn::Item::Type(s) => self.unit("type", &s.ident.to_string(), chain, item.span(),
                                                &s.attrs, s.ident.span(), 0),
                syn::Item::Macro(m) => {
                    if let Some(ident) = &m.ident {
                        self.unit("macro", &ident.to_string(), chain, item.span(), &m.attrs,
                                  ident.span(), 0);
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, content)) = &m.content {
                        let mark = self.out.len();
                        fns += self.items(content, &join(chain, &m.ident.to_string()));
                        if self.out.len() == mark {
                            self.unit("mod", &m.ident.to_string(), chain, item.span(), &m.attrs,
                                      m.ident.span(), 0);
                        }
                    }
                }
                syn::Item::Impl(i) => {
                    let own = type_name(&i.self_ty);
                    let trait_name = i.trait_.as_ref()
                        .and_then(|(_, p, _)| p.segments.last().map(|s| s.ident.to_string()));
                    let name = match (&own, &trait_name, &i.trait_) {
                        (Some(o), Some(t), _) => Some(format!("{} for {}", t, o)),
                        (Some(o), None, None) => Some(o.clone()),
                        _ => None,
                    };
                    let inner = name.as_ref().map(|n| join(chain, n)).unwrap_or(chain.to_string());
                    let mark = self.out.len();
                    let mut inside = 0;
                    for ii in &i.items {
                        if let syn::ImplItem::Method(m) = ii {
                            inside += 1;
                            self.unit("method", &m.sig.ident.to_string(), &inner, ii.span(),
                                      &m.attrs, m.sig.ident.span(), line(m.block.brace_token.span));
                        }
                    }
                    fns += inside;
                    if inside == 0 {
                        self.out.truncate(mark);
                        if let Some(n) = name {
                            self.unit("impl", &n, chain, item.span(), &i.attrs, i.self_ty.span(), 0);
                        }
                    }
                }
                syn::Item::Trait(t) => {
                    let inner = join(chain, &t.ident.to_string());
                    let mut inside = 0;
                    for ti in &t.items {
                        if let syn::TraitItem::Method(m) = ti {
                            if let Some(block) = &m.default {
                                inside += 1;
                                self.unit("method", &m.sig.ident.to_string(), &inner, ti.span(),
                                          &m.attrs, m.sig.ident.span(), line(block.brace_token.span));
                            }
                        }
                    }
                    fns += inside;
                    if inside == 0 {
                        self.unit("trait", &t.ident.to_string(), chain, item.span(), &t.attrs,
                                  t.ident.span(), 0);
                    }
                }
                _ => {}
            }
        }
        fns
    }
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for path in stdin.lock().lines() {
        let path = path.unwrap();
        let row = match std::fs::read(&path) {
            Err(e) => format!("{{\"file\":{},\"error\":{}}}", json(&path), json(&e.to_string())),
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).to_string();
                match syn::parse_file(&text) {
                    Err(e) => format!("{{\"file\":{},\"error\":{}}}", json(&path),
                                      json(&format!("line {}: {}", e.span().start().line, e))),
                    Ok(file) => {
                        let mut u = Units { out: Vec::new() };
                        u.items(&file.items, "");
                        format!("{{\"file\":{},\"units\":[{}]}}", json(&path), u.out.join(","))
                    }
                }
            }
        };
        writeln!(out, "{}", row).unwrap();
    }
}
