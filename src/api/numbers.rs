//! Numbers a client sends, refused in words: `deals must be between 1 and 500`, not the
//! parser's `invalid value: integer -5, expected u32`. The range of each number is the
//! one the OpenAPI document states (its `minimum` and `maximum`), so the refusal and the
//! document cannot disagree, and a new field needs no code here.
//!
//! [`Json`] reads a body as `web::Json` does (the size limit, the content type, the
//! syntax: `JsonConfig`'s), then into its type with serde's own rules; only a body its
//! type refuses is walked against the route's schema to name the number at fault. A
//! query string its type refuses is walked likewise ([`query_refusal`]).

use std::sync::OnceLock;

use actix_web::dev::Payload;
use actix_web::error::QueryPayloadError;
use actix_web::{FromRequest, HttpRequest, web};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::ApiError;

/// The OpenAPI document as JSON, handed over once by the startup (which knows both the
/// document and the routes): read here, it would make the handlers that use [`Json`]
/// depend on the document that names them.
static DOC: OnceLock<Value> = OnceLock::new();

/// Takes the ranges of every number from `document` (the OpenAPI document's text).
pub fn read_ranges(document: &str) {
    DOC.get_or_init(|| serde_json::from_str(document).expect("the document is JSON"));
}

/// A JSON body of type `T`, its numbers refused in words.
pub struct Json<T>(pub T);

impl<T> Json<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Json<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let raw = web::Json::<Box<RawValue>>::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let raw = raw.await?.into_inner();
            // The text itself, so serde's rules (a field twice, say) are the ones applied.
            serde_json::from_str(raw.get()).map(Json).map_err(|e| {
                let detail = body_refusal(&req, raw.get().as_bytes());
                let detail = detail.unwrap_or_else(|| format!("the body is not acceptable: {e}"));
                ApiError::bad_request(detail).into()
            })
        })
    }
}

/// The refusal of a body (`text`) its type refused, naming the number at fault, if one is.
pub fn body_refusal(req: &HttpRequest, text: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(text).ok()?;
    refusal(&value, body_schema(req)?, "")
}

/// Refusals of a query string: the number at fault named with its range, if one is.
pub fn query_error(err: QueryPayloadError, req: &HttpRequest) -> actix_web::Error {
    if let Some(detail) = query_refusal(req) {
        return ApiError::bad_request(detail).into();
    }
    let detail = match err {
        QueryPayloadError::Deserialize(e) => format!("bad query string: {e}"),
        other => format!("bad query string: {other}"),
    };
    ApiError::bad_request(detail).into()
}

/// The refusal of a query string its type refused, naming the number at fault, if one is.
pub fn query_refusal(req: &HttpRequest) -> Option<String> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(req.query_string()).ok()?;
    let parameters = operation(req)?.get("parameters")?.as_array()?;
    pairs.iter().find_map(|(name, text)| {
        let parameter = parameters
            .iter()
            .find(|p| p["in"] == "query" && p["name"] == name.as_str())?;
        let schema = resolve(&parameter["schema"]);
        let value = (text.parse::<i64>().map(Value::from))
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .ok()
            .or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(Value::from)
            })
            .unwrap_or_else(|| Value::String(text.clone()));
        refusal(&value, schema, name)
    })
}

/// The document's operation for the route `req` matched.
fn operation(req: &HttpRequest) -> Option<&'static Value> {
    let pattern = req.match_pattern()?;
    let method = req.method().as_str().to_ascii_lowercase();
    DOC.get()?.get("paths")?.get(pattern.as_str())?.get(method)
}

fn body_schema(req: &HttpRequest) -> Option<&'static Value> {
    let body = operation(req)?.get("requestBody")?;
    Some(resolve(&body["content"]["application/json"]["schema"]))
}

/// `schema` with its `$ref`s followed.
fn resolve(mut schema: &'static Value) -> &'static Value {
    for _ in 0..8 {
        let Some(name) = schema["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
        else {
            break;
        };
        let Some(doc) = DOC.get() else { break };
        schema = &doc["components"]["schemas"][name];
    }
    schema
}

/// The first number of `value` (at `path`) out of `schema`'s range, in words.
fn refusal(value: &Value, schema: &'static Value, path: &str) -> Option<String> {
    let schema = resolve(schema);
    for branches in ["allOf", "oneOf", "anyOf"] {
        if let Some(found) = schema[branches]
            .as_array()
            .and_then(|all| all.iter().find_map(|s| refusal(value, s, path)))
        {
            return Some(found);
        }
    }
    let types = |t: &str| match &schema["type"] {
        Value::String(one) => one == t,
        Value::Array(all) => all.iter().any(|a| a == t),
        _ => false,
    };
    match value {
        Value::Object(fields) => fields.iter().find_map(|(name, v)| {
            let at = match path {
                "" => name.clone(),
                _ => format!("{path}.{name}"),
            };
            refusal(v, schema.get("properties")?.get(name)?, &at)
        }),
        Value::Array(items) => {
            let each = schema.get("items")?;
            items
                .iter()
                .find_map(|v| refusal(v, each, &format!("{path}[]")))
        }
        // Not a number: a type's refusal, serde's to word.
        Value::Null => None,
        _ if types("integer") => {
            let (lo, hi) = (schema["minimum"].as_f64(), schema["maximum"].as_f64());
            let within = value
                .as_i64()
                .map(|n| n as f64)
                .or(value.as_u64().map(|n| n as f64));
            match within {
                Some(n) if lo.is_none_or(|lo| n >= lo) && hi.is_none_or(|hi| n <= hi) => None,
                Some(_) => Some(format!("{path} must be {}", range(lo, hi))),
                None if value.is_number() && value.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                    Some(format!("{path} must be {}", range(lo, hi)))
                }
                None => Some(format!("{path} must be a whole number {}", range(lo, hi))),
            }
        }
        _ => None,
    }
}

/// "between 1 and 500"; with no maximum, a 64-bit number's (the document states one for
/// every narrower number: the test of these refusals sees to it).
fn range(lo: Option<f64>, hi: Option<f64>) -> String {
    let hi = hi.map_or_else(|| u64::MAX.to_string(), |hi| hi.to_string());
    format!("between {} and {hi}", lo.unwrap_or(0.0))
}
